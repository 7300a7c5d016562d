"""The TASK anchor: any change to an anchored TASK's bytes is caught by the holder of the key, no one else forges it."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from handoff_core.contract.anchor import TaskAnchor, anchor_state, anchored, lead_proof

KEY, OTHER_KEY = b"k" * 32, b"o" * 32
REF = "2026-11-30-demo/20261130T044500Z/001-implement-a1"
TASK = (
    "---\nschema_version: 1\n---\n\n# 任务简报\n\n## Goal\nImplement A1.\n\n## Return\n"
    "- REPORT: `REPORT.md`\n- Report token check: `sha256:" + "a" * 64 + "`\n"
)


def test_an_anchored_task_verifies_for_its_ref_and_key_only() -> None:
    data = anchored(TASK, KEY, REF).encode()
    assert anchor_state(KEY, REF, data) == "anchored"
    assert anchor_state(OTHER_KEY, REF, data) == "changed"
    assert anchor_state(KEY, REF.replace("001", "002"), data) == "changed"  # copied onto another task


@given(st.data())
def test_any_byte_changed_in_an_anchored_task_makes_it_changed(data: st.DataObject) -> None:
    original = anchored(TASK, KEY, REF).encode()
    at = data.draw(st.integers(0, len(original) - 1))
    byte = data.draw(st.integers(0, 255).filter(lambda b: b != original[at]))
    assert anchor_state(KEY, REF, original[:at] + bytes([byte]) + original[at + 1 :]) == "changed"


@given(st.binary(max_size=64))
def test_bytes_added_or_an_anchor_line_stripped_make_it_changed(extra: bytes) -> None:
    original = anchored(TASK, KEY, REF).encode()
    assert anchor_state(KEY, REF, original + b"\n" + extra) == "changed"
    assert anchor_state(KEY, REF, TASK.encode()) == "changed"  # the server's lines are there, the anchor is not


def test_a_task_no_server_wrote_is_unanchored() -> None:
    hand_written = TASK.split("- Report token check", maxsplit=1)[0].encode()
    assert anchor_state(KEY, REF, hand_written) == "unanchored"


def anchor_of(key: bytes, governed: bool) -> TaskAnchor:
    return TaskAnchor(key, lambda ref: "", lambda: governed, lambda: None, governed)


def test_a_task_without_an_anchor_is_changed_only_where_the_leads_secret_governs() -> None:
    hand_written = TASK.split("- Report token check", maxsplit=1)[0].encode()
    assert anchor_of(KEY, governed=False).state(REF, hand_written) == "unanchored"
    assert anchor_of(KEY, governed=True).state(REF, hand_written) == "changed"
    published = anchored(TASK, KEY, REF).encode()
    assert [anchor_of(KEY, governed).state(REF, published) for governed in (False, True)] == ["anchored"] * 2
    assert anchor_of(OTHER_KEY, governed=False).state(REF, published) == "changed"


def test_the_leads_proof_of_a_report_on_a_stripped_task_is_task_changed_where_it_governs() -> None:
    stripped = TASK.split("- Report token check", maxsplit=1)[0].encode()
    report = b"# REPORT\n\nStatus: completed\n"
    assert lead_proof(anchor_of(KEY, governed=True), REF, stripped, report) == "task_changed"
    assert lead_proof(anchor_of(KEY, governed=False), REF, stripped, report) == "absent"


_WHOLE = re.compile(rb"^- Task anchor: `hmac-sha256:([0-9a-f]{64})`\n\Z", re.MULTILINE)
_ANY = re.compile(rb"^- Task anchor:", re.MULTILINE)


def by_pattern(key: bytes, ref: str, task: bytes) -> str:
    """The anchor's grammar said as patterns: one anchor line, the last, verifying over the bytes before it."""
    line = _WHOLE.search(task)
    if line is None:
        return "changed" if _ANY.search(task) or b"- Report token check: " in task else "unanchored"
    if len(_ANY.findall(task)) != 1:
        return "changed"
    return (
        "anchored"
        if anchored(task[: line.start()].decode("latin-1"), key, ref).encode("latin-1") == task
        else "changed"
    )


LINES = st.sampled_from(
    [b"- Task anchor:", b"- Task anchor: `hmac-sha256:" + b"0" * 64 + b"`", b"x", b"", b"- Report token check: `x`"]
)


ASCII = st.binary(max_size=8).map(lambda data: bytes(byte & 0x7F for byte in data))  # anchored() takes text


@given(st.lists(st.one_of(LINES, ASCII), max_size=6), st.booleans(), st.booleans())
def test_the_anchor_is_read_as_its_grammar_says(lines: list[bytes], sign: bool, newline: bool) -> None:
    body = b"\n".join(lines) + (b"\n" if newline else b"")
    task = anchored(body.decode("latin-1"), KEY, REF).encode("latin-1") if sign else body
    assert anchor_state(KEY, REF, task) == by_pattern(KEY, REF, task)

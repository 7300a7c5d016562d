"""The TASK anchor: any change to an anchored TASK's bytes is caught by the holder of the key, no one else forges it."""

from __future__ import annotations

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

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from handoff_core.contract.report import (
    Report,
    capture,
    count_sentences,
    header_fields,
    header_status,
    normalise_report,
    parse_report,
    render_report,
    summary_line,
)
from handoff_core.errors import InvalidContent
from tests.support.reports import captured_text
from tests.support.strategies import long_markdown, markdown

SHA = "9f2c" + "0" * 60


def make_report(**overrides: object) -> Report:
    fields: dict[str, Any] = {
        "session": "20261130T044500Z",
        "task": "001-implement-a1",
        "status": "completed",
        "focused": "Implemented A1. Kept the API. Stopped after tests. Next: review.",
        "artifacts": "src/a1/core.py (commit abc123)",
        "verification": "`pytest tests/a1 -q`: exit 0, Python 3.11",
        "task_sha256": SHA,
    }
    fields.update(overrides)
    return Report(**fields)


@settings(max_examples=150)
@given(
    status=st.sampled_from(["completed", "blocked", "failed", "cancelled"]),
    focused=markdown(),
    artifacts=st.one_of(markdown(), long_markdown),
    verification=markdown(),
    unverified=markdown(),
    problems=markdown(),
)
def test_render_parse_render_is_the_identity(
    status: str, focused: str, artifacts: str, verification: str, unverified: str, problems: str
) -> None:
    report = make_report(
        status=status,
        focused=focused,
        artifacts=artifacts,
        verification=verification,
        unverified=unverified,
        problems=problems,
    )
    text = render_report(report)
    assert parse_report(text) == normalise_report(report)
    assert render_report(parse_report(text)) == text


@given(st.text(max_size=200))
def test_any_text_either_renders_faithfully_or_is_refused(focused: str) -> None:
    try:
        text = render_report(make_report(focused=focused))
    except InvalidContent:
        return
    assert parse_report(text).focused == normalise_report(make_report(focused=focused)).focused


def test_the_header_carries_identity_status_and_the_task_hash() -> None:
    text = render_report(make_report())
    assert "Session: 20261130T044500Z\nTask: 001-implement-a1\nStatus: completed\nTask-SHA256: " + SHA in text


@pytest.mark.parametrize("status", ["done", "Completed", "", "pending"])
def test_a_status_outside_the_four_values_is_refused(status: str) -> None:
    with pytest.raises(InvalidContent):
        render_report(make_report(status=status))


@given(st.text(min_size=1, max_size=300).filter(lambda s: s.strip() != "" and "\x00" not in s))
def test_a_lead_capture_keeps_the_text_verbatim(text: str) -> None:
    report = capture("20261130T044500Z", "001-a", "completed", "codex-call-7", text, None)
    parsed = parse_report(render_report(report))
    expected = text.replace("\r\n", "\n").replace("\r", "\n").strip("\n")
    assert parsed.captured_by == "Lead"
    assert parsed.original_locator == "codex-call-7"
    assert captured_text(parsed) == expected


def test_a_capture_invents_no_verification() -> None:
    report = capture("20261130T044500Z", "001-a", "completed", "msg-1", "All tests pass!", None)
    assert "All tests pass!" not in report.verification
    assert "exit 0" not in render_report(report).split("```")[0]


def test_sentences_are_counted_in_english_and_chinese() -> None:
    assert count_sentences("One. Two! Three?") == 3
    assert count_sentences("完成了。决定保留接口。下一步审查。") == 3
    assert count_sentences("Version 3.11 works. Done.") == 2


def test_the_summary_line_has_the_four_parts() -> None:
    line = summary_line("20261130T044500Z", "001-a", "completed", "x/REPORT.md", "Built  A1\nand tested.")
    assert line == "20261130T044500Z/001-a · completed · x/REPORT.md · Built A1 and tested."


def test_a_capture_with_a_nul_character_is_refused() -> None:
    with pytest.raises(InvalidContent):
        render_report(capture("20261130T044500Z", "001-a", "completed", "msg-1", "a\x00b", None))


report_lines = st.sampled_from(
    [
        "Status: completed",
        "Status: blocked\r",
        "Status:  failed",
        "Status: completed ",
        "Status: done",
        "status: completed",
        "Session: 20260101T000000Z",
        "## 聚焦交接",
        "##  x",
        "```",
        "  ~~~",
        "",
        "text \u2028 Status: failed",
    ]
)


@given(st.lists(report_lines, max_size=10), st.binary(max_size=4), st.booleans())
def test_the_status_read_from_a_report_header_is_the_one_header_fields_reads(
    lines: list[str], noise: bytes, final_newline: bool
) -> None:
    data = "\n".join(lines).encode() + noise + (b"\n" if final_newline else b"")
    expected = header_fields(data.decode("utf-8", "replace"))[0].get("Status")
    assert header_status(data) == expected

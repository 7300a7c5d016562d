"""REPORT.md: the executor's one-time answer, or the Lead's verbatim capture of a text reply (SPEC §5)."""

from __future__ import annotations

import re

from handoff_core.contract.ids import check_round
from handoff_core.contract.ids import check_task as check_task_id
from handoff_core.contract.markdown import (
    check_fragment,
    header_lines,
    normalise_newlines,
    required_sections,
    split_lines,
)
from handoff_core.contract.pattern import compile_on_use
from handoff_core.contract.record import NamedTuple
from handoff_core.contract.values import header_pair, visible
from handoff_core.errors import InvalidContent
from handoff_core.layout import (
    FOCUSED_SENTENCES,
    REPORT_FOCUSED,
    REPORT_NEXT,
    REPORT_SECTIONS,
    REPORT_STATUSES,
    REPORT_WORK,
    focused_length_ok,
)

__all__ = [
    "COMMIT_RE",
    "Report",
    "capture",
    "count_sentences",
    "fence_for",
    "first_sentence",
    "focused_problem",
    "header_fields",
    "header_status",
    "normalise_report",
    "parse_report",
    "render_report",
    "summary_line",
]

_FIELDS = (("artifacts", "修改或成果"), ("verification", "验证"), ("unverified", "未完成或未验证"))
_SHA256 = compile_on_use(r"^[0-9a-f]{64}\Z")
COMMIT_RE = compile_on_use(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})\Z")  # a full object name, SHA-1 or SHA-256
_SENTENCE_END = re.compile(r"(?<=[。！？])|(?<=[.!?])(?=\s|$)")
CAPTURE_FOCUS = (
    "本报告由 Lead 原样捕获执行者仅以文本返回的结果。"
    "原文保存在“产物与验证”的围栏代码块中，未作改写。"
    "执行者的验证结果未经 Lead 补造，验收前需要 Lead 核对原文与实际产物。"
)


class Report(NamedTuple):
    session: str
    task: str
    status: str
    focused: str
    artifacts: str
    verification: str
    unverified: str = "无"
    problems: str = "无"
    task_sha256: str | None = None
    captured_by: str | None = None
    original_locator: str | None = None
    source_checkpoint: str | None = None  # the commit the executor hands back (audit_task judges it)


def _single_line(value: str, what: str) -> str:
    if not value or value != value.strip() or not value.isprintable():
        raise InvalidContent(f"{what} must be one non-empty printable line without surrounding spaces")
    return value


def normalise_report(report: Report) -> Report:
    if report.status not in REPORT_STATUSES:
        raise InvalidContent(f"status {report.status!r} is not one of {', '.join(REPORT_STATUSES)}")
    check_round(report.session)
    check_task_id(report.task)
    if report.task_sha256 is not None and not _SHA256.match(report.task_sha256):
        raise InvalidContent("task_sha256 must be 64 lowercase hex digits, as returned by create_task or read_task")
    if report.source_checkpoint is not None and not COMMIT_RE.match(report.source_checkpoint):
        raise InvalidContent(
            "source_checkpoint must be a full commit id (40 hex digits): give `git rev-parse HEAD` of your worktree"
        )
    for value, what in ((report.captured_by, "Captured-by"), (report.original_locator, "Original-Locator")):
        if value is not None:
            _single_line(value, what)
    return report._replace(
        focused=check_fragment(report.focused, "focused handoff"),
        artifacts=check_fragment(report.artifacts, "artifacts"),
        verification=check_fragment(report.verification, "verification"),
        unverified=check_fragment(report.unverified, "unverified"),
        problems=check_fragment(report.problems, "problems"),
    )


def _indent(text: str) -> list[str]:
    return [f"  {line}" if line else "" for line in text.split("\n")]


def render_report(report: Report) -> str:
    report = normalise_report(report)
    head = [
        "# 任务回报",
        "",
        f"Session: {report.session}",
        f"Task: {report.task}",
        f"Status: {report.status}",
    ]
    head += [f"Task-SHA256: {report.task_sha256}"] if report.task_sha256 else []
    head += [f"Captured-by: {report.captured_by}"] if report.captured_by else []
    head += [f"Original-Locator: {report.original_locator}"] if report.original_locator else []
    head += [f"Source-Checkpoint: {report.source_checkpoint}"] if report.source_checkpoint else []
    middle: list[str] = []
    for attr, label in _FIELDS:
        middle += [f"- {label}:", *_indent(getattr(report, attr))]
    lines = [
        *head,
        "",
        f"## {REPORT_FOCUSED}",
        report.focused,
        "",
        f"## {REPORT_WORK}",
        *middle,
        "",
        f"## {REPORT_NEXT}",
    ]
    text = "\n".join([*lines, report.problems, ""])
    if parse_report(text) != report:
        raise InvalidContent("the report text would not read back as given; simplify its Markdown and retry")
    return text


def header_fields(text: str) -> tuple[dict[str, str], list[str]]:
    """``Key: value`` lines before the first section, and the keys given more than once."""
    fields: dict[str, str] = {}
    duplicates: list[str] = []
    for _, line in header_lines(text):
        if (pair := header_pair(line)) is not None:
            if pair[0] in fields:
                duplicates.append(pair[0])
            fields.setdefault(*pair)
    return fields, duplicates


def _split_fields(section: str) -> dict[str, str]:
    labels = {f"- {label}:": attr for attr, label in _FIELDS}
    values: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in split_lines(section):
        if line in labels:
            current = values.setdefault(labels[line], [])
        elif current is not None:
            current.append(line[2:] if line.startswith("  ") else line)
    return {attr: "\n".join(lines).strip("\n") for attr, lines in values.items()}


def parse_report(text: str) -> Report:
    fields, duplicates = header_fields(text)
    if duplicates:
        raise InvalidContent(f"REPORT header repeats {sorted(set(duplicates))}")
    found = required_sections(text, REPORT_SECTIONS, "REPORT")
    parts = _split_fields(found[REPORT_WORK])
    return Report(
        session=fields.get("Session", ""),
        task=fields.get("Task", ""),
        status=fields.get("Status", ""),
        focused=found[REPORT_FOCUSED].strip("\n"),
        artifacts=parts.get("artifacts", found[REPORT_WORK].strip("\n")),
        verification=parts.get("verification", ""),
        unverified=parts.get("unverified", ""),
        problems=found[REPORT_NEXT].strip("\n"),
        task_sha256=fields.get("Task-SHA256"),
        captured_by=fields.get("Captured-by"),
        original_locator=fields.get("Original-Locator"),
        source_checkpoint=fields.get("Source-Checkpoint"),
    )


def count_sentences(text: str) -> int:
    return sum(1 for part in _SENTENCE_END.split(text) if part.strip())


def focused_problem(text: str) -> str | None:
    """Why a focused handoff is the wrong length, or None when it is 3 to 5 sentences."""
    sentences = count_sentences(text)
    if focused_length_ok(sentences):
        return None
    low, high = FOCUSED_SENTENCES
    return f"focused handoff has {sentences} sentence(s); the contract asks for {low} to {high}"


def first_sentence(text: str) -> str:
    return next((part.strip() for part in _SENTENCE_END.split(text) if part.strip()), "")


def fence_for(text: str) -> str:
    """A backtick fence longer than any backtick run in ``text``."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def capture(session: str, task: str, status: str, locator: str, text: str, task_sha256: str | None) -> Report:
    """The Lead's verbatim capture of a reply that came back only as text; nothing is invented."""
    verbatim = normalise_newlines(text)
    if not verbatim.strip():
        raise InvalidContent("the captured text is empty: paste the executor's reply exactly as returned")
    fence = fence_for(verbatim)
    return Report(
        session=session,
        task=task,
        status=status,
        focused=CAPTURE_FOCUS,
        artifacts=f"执行者原文（原样捕获）：\n\n{fence}text\n{verbatim}\n{fence}",
        verification="执行者未以文件交付验证结果；Lead 未补造任何验证结论。",
        unverified="原文中的全部声明均未经 Lead 核验。",
        problems="由 Lead 核对原文与实际产物后决定下一步。",
        task_sha256=task_sha256,
        captured_by="Lead",
        original_locator=locator,
    )


def summary_line(session: str, task: str, status: str, location: str, summary: str) -> str:
    """The one line an executor sends back through its native channel; never refuses."""
    return f"{session}/{task} · {status} · {location} · {visible(summary) or '(no summary)'}"


_STATUS_LINE = compile_on_use(rb"^Status:(.*)$", re.M)
_STATUS_BYTES = {f" {status}{end}".encode(): status for status in REPORT_STATUSES for end in ("", "\r")}


def header_status(data: bytes) -> str | None:
    """The REPORT's ``Status:`` header as ``header_fields`` reads it (``data`` decoded with
    replacement), from the header's bytes alone when no fence can open in them: then the first
    ``## `` line ends the header either way, and a first ``Status:`` line that is plainly one of
    ``REPORT_STATUSES`` is read without a regex per line. A cold status reads thousands of these."""
    cut = 0 if data.startswith(b"## ") else data.find(b"\n## ")
    head = data if cut == -1 else data[:cut]
    if b"```" in head or b"~~~" in head:
        head = data
    elif (line := _STATUS_LINE.search(head)) is not None and line.group(1) in _STATUS_BYTES:
        return _STATUS_BYTES[line.group(1)]  # the first line naming a Status, plainly one of them
    return header_fields(head.decode("utf-8", "replace"))[0].get("Status")

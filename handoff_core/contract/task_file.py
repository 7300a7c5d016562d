"""TASK.md's text: rendered from a checked ``Task``, parsed back exactly, frozen once published (SPEC §4)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, NamedTuple

from handoff_core.contract.checks import checks_lines, split_checks
from handoff_core.contract.frontmatter import load_yaml, quote, split_frontmatter
from handoff_core.contract.markdown import required_sections
from handoff_core.contract.proof import SIGNING_KEY_LABEL
from handoff_core.contract.scope import SCOPE_FENCE, Scope, scope_from
from handoff_core.contract.scope_text import LIST_START, scope_lines
from handoff_core.contract.task import (
    META_KEYS,
    RETURN_START,
    SIGNING_KEY_RE,
    TOKEN_CHECK,
    TOKEN_CHECK_RE,
    Task,
    normalise_task,
)
from handoff_core.errors import InvalidContent
from handoff_core.layout import KINDS, TASK_SECTIONS, TASK_TITLE

__all__ = ["TaskIdentity", "original_contract", "parse_task", "render_checked", "render_task", "task_identity"]


def _read_line(returns: str, label: str, pattern: re.Pattern[str]) -> str | None:
    for line in returns.split("\n"):
        if line.startswith(label) and pattern.match(value := line[len(label) :].strip("`")):
            return value
    return None


def render_task(task: Task) -> str:
    """TASK.md for any Task, checked first."""
    return render_checked(normalise_task(task))


def render_checked(task: Task) -> str:
    """TASK.md for a Task already checked (``normalise_task`` or ``check_body``); it must read back as given."""
    meta = [
        "---",
        "schema_version: 1",
        f"session: {quote(task.session)}",
        f"task: {quote(task.task)}",
        f"kind: {quote(task.kind)}",
    ]
    meta += [f"change: {quote(task.change)}"] if task.change is not None else []
    meta += [f"ticket: {quote(task.ticket)}"] if task.ticket is not None else []
    returns = [
        f"{RETURN_START}`{task.report_path}` — written once by the executor with the write_report tool.",
        "- Reply after read-back: `session/task · Status · report location · one-sentence summary`.",
        "- session-locator.json is written by the Lead only, once the session log path is confirmed.",
    ]
    returns += [f"{TOKEN_CHECK}`{task.token_check}`"] if task.token_check else []
    returns += [f"{SIGNING_KEY_LABEL}`{task.signing_key}`"] if task.signing_key else []
    body = [
        "---",
        "",
        f"# {TASK_TITLE}",
        "",
        "## Goal",
        task.goal,
        "",
        "## Inputs",
        task.inputs,
        "",
        "## Workspace and Scope",
        *scope_lines(task.scope),
        "",
        "## Acceptance",
        task.acceptance,
        *(["", *checks_lines(task.checks)] if task.checks else []),
        "",
        "## Return",
        *([task.return_notes, ""] if task.return_notes else []),
        *returns,
        "",
    ]
    text = "\n".join(meta + body)
    if parse_task(text) != task:
        raise InvalidContent("the task text would not read back as given; simplify its Markdown and retry")
    return text


def _before_last(text: str, marker: str) -> tuple[str, str]:
    lines = text.split("\n")
    starts = [i for i, line in enumerate(lines) if line.startswith(marker)]
    if not starts:
        raise InvalidContent(f"TASK section is missing its generated '{marker.strip()}' list")
    return "\n".join(lines[: starts[-1]]).strip("\n"), "\n".join(lines[starts[-1] :])


def _parse_scope(section: str) -> Scope:
    notes, rest = _before_last(section, LIST_START)
    lines = rest.split("\n")
    try:
        start = lines.index(SCOPE_FENCE)
        end = lines.index("```", start + 1)
    except ValueError:
        raise InvalidContent("Workspace and Scope has no closed ```handoff-scope block") from None
    return scope_from(load_yaml("\n".join(lines[start + 1 : end]), "handoff-scope block"), notes)


class TaskIdentity(NamedTuple):
    """Whose a TASK says it is, and the hash of its report token (what a token index needs)."""

    session: str
    task: str
    change: str | None
    token_check: str | None


def _read(text: str) -> tuple[Mapping[str, Any], dict[str, str], str, str]:
    """Frontmatter, sections, and the Return section split into the Lead's notes and the generated list."""
    meta, body = split_frontmatter(text)
    unknown = set(meta) - set(META_KEYS)
    if unknown:
        raise InvalidContent(f"TASK: unknown metadata field(s) {sorted(unknown)}")
    found = required_sections(body, TASK_SECTIONS, "TASK")
    return_notes, returns = _before_last(found["Return"], RETURN_START)
    return meta, found, return_notes, returns


def _identity(meta: Mapping[str, Any], returns: str) -> TaskIdentity:
    change = meta.get("change")
    check = _read_line(returns, TOKEN_CHECK, TOKEN_CHECK_RE)
    return TaskIdentity(
        str(meta.get("session")), str(meta.get("task")), change if isinstance(change, str) else None, check
    )


def task_identity(text: str) -> TaskIdentity:
    """``parse_task``'s ids and token check, read the same way but without the scope block; raises as it does."""
    meta, _, _, returns = _read(text)
    return _identity(meta, returns)


def parse_task(text: str) -> Task:
    """Read TASK.md back into a Task; raises InvalidContent for anything malformed."""
    meta, found, return_notes, returns = _read(text)
    kind = meta.get("kind")
    if kind not in KINDS:
        raise InvalidContent(f"TASK: kind {kind!r} is not one of {', '.join(KINDS)}")
    report = re.match(rf"^{re.escape(RETURN_START)}`([^`]*)`", returns)
    identity = _identity(meta, returns)
    acceptance, checks = split_checks(found["Acceptance"])
    return Task(
        session=identity.session,
        task=identity.task,
        kind=kind,
        goal=found["Goal"].strip("\n"),
        inputs=found["Inputs"].strip("\n"),
        scope=_parse_scope(found["Workspace and Scope"]),
        acceptance=acceptance.strip("\n"),
        report_path=report.group(1) if report else "",
        token_check=identity.token_check,
        signing_key=_read_line(returns, SIGNING_KEY_LABEL, SIGNING_KEY_RE),
        return_notes=return_notes,
        change=meta.get("change"),
        ticket=meta.get("ticket"),
        checks=checks,
    )


ORIGINAL_GROUPS = ("身份与目标", "输入", "工作区与范围", "验收", "返回与通信")  # seed 2.0.5's five TASK groups
ORIGINAL_GROUPS_NAMED = 3  # headings a TASK names of them to read as the original contract's


def original_contract(data: bytes | None) -> bool:
    """Whether a TASK was written under the seed's original contract: no frontmatter, no
    ``schema_version``, no scope block, and headings naming at least three of that contract's five
    groups. Such a TASK is collected under its own contract and is never part of a new dispatch's
    scan [seed 000 session-files: 存量 TASK、REPORT……按原合同回收……新版校验器不把旧无版本 TASK
    当作新版通过，历史不纳入新派遣扫描]. Anything else that does not read as ours (empty, not UTF-8,
    a frontmatter gone bad, text replacing a published TASK) may be ours gone bad: it holds what it can."""
    if not data or not data.strip():
        return False
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        return False
    if text.lstrip().startswith("---") or "schema_version" in text or SCOPE_FENCE in text:
        return False
    headings = [line.lstrip("#").strip() for line in text.splitlines() if line.startswith("#")]
    return sum(any(group in heading for heading in headings) for group in ORIGINAL_GROUPS) >= ORIGINAL_GROUPS_NAMED

"""Derived state of every task, from the handoff files alone (no index, no heartbeat)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from handoff_core.contract.frontmatter import split_frontmatter
from handoff_core.contract.ids import Ref
from handoff_core.contract.report import header_fields
from handoff_core.contract.task import Scope, read_scope
from handoff_core.contract.validate import check_handoff
from handoff_core.errors import HandoffError
from handoff_core.files.publishing import is_temp
from handoff_core.files.reader import TaskTree


@dataclass(frozen=True)
class TaskStatus:
    ref: Ref
    kind: str | None
    state: str  # incomplete | dispatched | returned:<status> | released | invalid
    age_seconds: float
    scope: Scope | None
    has_locator: bool
    temp_files: tuple[str, ...]
    problems: tuple[str, ...]
    outstanding: bool  # TASK present, no REPORT, no RELEASE

    @property
    def claims_writer(self) -> bool:
        """An outstanding implementation task holds its workspace and writable globs (no TTL)."""
        return self.kind == "implementation" and self.outstanding and self.scope is not None


def _state(tree: TaskTree, problems: tuple[str, ...]) -> str:
    if tree.file("TASK.md").kind == "missing":
        return "incomplete"
    if problems:
        return "invalid"
    report = tree.file("REPORT.md")
    if report.kind == "file" and report.data is not None:
        fields, _ = header_fields(report.data.decode("utf-8", "replace"))
        return f"returned:{fields.get('Status', '?')}"
    return "released" if tree.file("RELEASE.md").kind == "file" else "dispatched"


def task_kind_and_scope(data: bytes | None) -> tuple[str | None, Scope | None]:
    """Just what ownership needs from a TASK: its kind and its handoff-scope block."""
    try:
        text = (data or b"").decode("utf-8")
        kind = split_frontmatter(text)[0].get("kind")
    except (HandoffError, UnicodeDecodeError):
        return None, None
    return (kind if isinstance(kind, str) else None), read_scope(text)


def task_status(ref: Ref, tree: TaskTree, now: float | None = None) -> TaskStatus:
    task_entry = tree.file("TASK.md")
    stage = "return" if tree.file("REPORT.md").kind != "missing" else "dispatch"
    verdict = check_handoff(lambda: tree, stage, ref.change, ref.session, ref.task)
    # A change that is no longer active still has readable tasks; only its dispatch is over.
    problems = tuple(p for p in verdict.errors if p != "dispatch requires an active change")
    kind, scope = task_kind_and_scope(task_entry.data)
    age = max(0.0, (now or time.time()) - task_entry.mtime) if task_entry.kind == "file" else 0.0
    return TaskStatus(
        ref=ref,
        kind=kind,
        state=_state(tree, problems),
        age_seconds=round(age, 1),
        scope=scope,
        has_locator=tree.file("session-locator.json").kind != "missing",
        temp_files=tuple(name for name in tree.task_entries if is_temp(name)),
        problems=problems,
        outstanding=task_entry.kind == "file"
        and all(tree.file(n).kind == "missing" for n in ("REPORT.md", "RELEASE.md")),
    )

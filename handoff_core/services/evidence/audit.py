"""``audit_task``: the actual change of a task judged against its frozen TASK, from git and the files.

Every path changed from the TASK's base commit to the REPORT's checkpoint (both sides of a rename,
deletions, mode and submodule changes), plus what is left uncommitted or untracked in the worktree,
is judged by the one scope rule (``scope_rule``). A dirty worktree fails: the checkpoint is not the
whole work. What cannot be judged is ``unknown`` with the reason, never a guess: no base, no
checkpoint, a checkpoint that does not descend from the base, or a shared tree (a ``current`` task,
or a read-only task without a worktree) where changes cannot be attributed to one task. Nothing
is recorded: the audit is derived again on each call.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Literal

from handoff_core.contract.anchor import TASK_CHANGED
from handoff_core.contract.ids import Ref
from handoff_core.contract.report import COMMIT_RE, header_fields
from handoff_core.contract.task_file import parse_task
from handoff_core.errors import GitError, HandoffError
from handoff_core.files import git
from handoff_core.layout import REPORT_FILE, TASK_FILE
from handoff_core.services.evidence import pushed
from handoff_core.services.rules.scope_rule import ScopeRule
from handoff_core.services.tree.queries import Queries
from handoff_core.services.tree.status import TaskStatus

__all__ = [
    "MAX_AUDITS",
    "MAX_LISTED",
    "Audit",
    "Verdict",
    "Violation",
    "audit_task",
    "audit_verdicts",
    "worktree_verdict",
]

Verdict = Literal["passed", "failed", "unknown"]
MAX_LISTED = 200  # paths listed per answer; the counts say how many there were
SHARED_TREE = "the task shares the project tree with other writers: its changes cannot be attributed to it"


@dataclass(frozen=True)
class Violation:
    path: str
    why: str


@dataclass(frozen=True, kw_only=True)
class Audit:
    verdict: Verdict
    reason: str
    base: str = ""
    checkpoint: str = ""
    worktree: str = ""
    changed: tuple[str, ...] = ()  # "M path", "D path", "R old -> new"
    violations: tuple[Violation, ...] = ()
    dirty: tuple[str, ...] = ()  # uncommitted or untracked in the worktree
    changed_count: int = 0


def _shown(change: git.Change) -> str:
    return (
        f"{change.status} {change.old_path} -> {change.path}" if change.old_path else f"{change.status} {change.path}"
    )


def _judged(rule: ScopeRule, top: str, change: git.Change, prefix: str) -> list[Violation]:
    found = []
    if (why := rule.judge(f"{top}/{change.path}")) is not None:
        verb = "deleted" if change.status == "D" else "written"
        found.append(Violation(change.path, f"{prefix}{verb}, {why}"))
    if change.old_path and (why := rule.judge(f"{top}/{change.old_path}")) is not None:
        found.append(Violation(change.old_path, f"{prefix}renamed away (its deleted side), {why}"))
    return found


def _left_over(rule: ScopeRule, base_dir: str, dirty: list[git.Change], review: bool) -> list[Violation]:
    """Each uncommitted or untracked path fails the audit; the scope rule says whether it was allowed at all.
    A review commits nothing: its artifacts are left uncommitted, and only a path outside them fails."""
    found = []
    for change in dirty:
        judged = _judged(rule, base_dir, change, "uncommitted (not in the checkpoint), ")
        found += judged
        if not review and change.path not in {v.path for v in judged}:
            found.append(Violation(change.path, "uncommitted: not in the checkpoint"))
    return found


def _checkpoint(queries: Queries, ref: Ref) -> str | None:
    data = queries.read_optional(ref, REPORT_FILE)
    if data is None:
        return None
    return header_fields(data.decode("utf-8", "replace"))[0].get("Source-Checkpoint", "")


def audit_task(queries: Queries, ref: Ref) -> Audit:
    data = queries.read_file(ref, TASK_FILE)  # read once: the bytes judged are the bytes anchored
    task = parse_task(data.decode("utf-8", "replace").removeprefix("\ufeff"))
    scope = task.scope
    anchor = queries.anchor  # the TASK is the audit's yardstick: a changed one measures nothing
    if anchor is not None and anchor.state(str(ref), data) == "changed":
        return Audit(verdict="unknown", reason=TASK_CHANGED, base=scope.base)
    roots = queries.roots
    rule = ScopeRule(
        task, str(ref), Path(os.path.realpath(roots.project_root)), Path(os.path.realpath(roots.state_root))
    )
    if not scope.base:
        return Audit(verdict="unknown", reason="the TASK records no base commit: it was dispatched without git")
    checkpoint = _checkpoint(queries, ref)
    if checkpoint is None:
        return Audit(verdict="unknown", reason="no REPORT yet: nothing to audit", base=scope.base)
    if not checkpoint and scope.review_of:
        checkpoint = scope.base  # a review commits nothing: its tree stays at the fixed checkpoint it read
    if not checkpoint:
        return Audit(verdict="unknown", reason="the REPORT names no Source-Checkpoint commit", base=scope.base)
    # Both come from files anyone can edit, and become git arguments: only full object names pass.
    if not COMMIT_RE.match(checkpoint) or not COMMIT_RE.match(scope.base):
        return Audit(verdict="unknown", reason="the base or the checkpoint is not a full commit id", base=scope.base)
    top = rule.root
    if not top.is_dir():
        return Audit(verdict="unknown", reason=f"the worktree {top} is gone", base=scope.base, checkpoint=checkpoint)
    try:
        if scope.remote:  # pushed from another machine: the checkpoint comes from the git remote
            found = pushed.fetched(git.work_tree_of(top) or top, str(ref), scope, checkpoint)
            if isinstance(found, str):
                return Audit(verdict="unknown", reason=found, base=scope.base, checkpoint=checkpoint)
            return _audit(rule, top, scope.base, checkpoint, shared=False, dirty_then=set(), found=found)
        shared, dirty_then = not scope.worktree, set(scope.dirty)
        return _audit(
            rule, top, scope.base, checkpoint, shared=shared, dirty_then=dirty_then, review=bool(scope.review_of)
        )
    except GitError as exc:
        return Audit(verdict="unknown", reason=exc.message, base=scope.base, checkpoint=checkpoint)


def _audit(
    rule: ScopeRule,
    top: Path,
    base: str,
    checkpoint: str,
    *,
    shared: bool,
    dirty_then: set[str],
    found: git.Evidence | None = None,
    review: bool = False,
) -> Audit:
    made = partial(Audit, base=base, checkpoint=checkpoint, worktree=str(top) if not shared else "")
    found = found or git.evidence(top, base, checkpoint)
    descends = found.descends
    if descends is None:
        return made(
            verdict="unknown", reason=f"the checkpoint {checkpoint} or the base is not a commit of this repository"
        )
    if not descends:
        return made(verdict="unknown", reason="the checkpoint does not descend from the base commit")
    changes = found.changes
    dirty = [d for d in found.dirty if not ({d.path, d.old_path} - {None} <= dirty_then)]
    # git names paths from the top of the work tree, which a current task's project root may lie below
    base_dir = str(top) if not shared else str(git.work_tree_of(top) or top)
    violations = [v for change in changes for v in _judged(rule, base_dir, change, "")]
    if not shared and found.head != checkpoint:  # later commits are work the checkpoint does not hold
        violations.append(Violation("HEAD", f"the worktree is at {found.head}, past the checkpoint: not audited"))
    violations += _left_over(rule, base_dir, dirty, review=review)
    if shared:
        verdict: Verdict = "unknown"
        reason = SHARED_TREE
    elif violations:
        verdict, reason = "failed", f"{len(violations)} violation(s) of the TASK's scope ({rule.described()})"
    else:
        verdict, reason = "passed", f"every changed path lies in the TASK's scope ({rule.described()})"
    return made(
        verdict=verdict,
        reason=reason,
        changed=tuple(_shown(c) for c in changes[:MAX_LISTED]),
        violations=tuple(violations[:MAX_LISTED]),
        dirty=tuple(_shown(d) for d in dirty[:MAX_LISTED]),
        changed_count=len(changes),
    )


def _verdict(queries: Queries, ref: Ref) -> str:
    try:
        return audit_task(queries, ref).verdict
    except HandoffError:  # its TASK cannot be read now: status says so elsewhere
        return "unknown"


def worktree_verdict(queries: Queries, ref: Ref) -> str:
    """The audit verdict of a worktree task; empty for a task without one (its tree is shared)."""
    try:
        worktree = queries.read_task(ref)[0].scope.worktree
    except HandoffError:
        return ""
    return _verdict(queries, ref) if worktree else ""


MAX_AUDITS = 16  # audits run for one status page: each costs a few git calls


def audit_verdicts(queries: Queries, statuses: list[TaskStatus], limit: int = MAX_AUDITS) -> dict[Ref, str]:
    """The audit verdict of each returned worktree task among ``statuses`` (the first ``limit``);
    the rest are said to be left to ``audit_task``."""
    wanted = [s.ref for s in statuses if s.state == "returned" and s.scope is not None and s.scope.worktree]
    verdicts = {ref: _verdict(queries, ref) for ref in wanted[:limit]}
    return verdicts | dict.fromkeys(wanted[limit:], "not audited here: call audit_task")

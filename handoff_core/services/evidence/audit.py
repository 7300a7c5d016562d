"""``audit_task``: the actual change of a task judged against its frozen TASK, from git and the files.

Every path changed from the TASK's base commit to the REPORT's checkpoint (both sides of a rename,
deletions, mode and submodule changes), plus what is left uncommitted or untracked in the worktree,
is judged by the one scope rule (``scope_rule``). A dirty worktree fails: the checkpoint is not the
whole work. What cannot be judged is ``unknown`` with the reason, never a guess: no base, no
checkpoint, a checkpoint that does not descend from the base, or a read-only task without a
worktree, whose changes cannot be attributed to it. A ``current`` task is judged on what changed in
the shared tree since its dispatch (``since_dispatch``): a path outside its scope is a finding
that may be another writer's, and a path dirty at dispatch is named as not judged. A review's
artifacts in the reviewed tree are set aside, naming the review (``reviews``). Nothing is
recorded: the audit is derived again on each call.
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
from handoff_core.contract.scope import Scope
from handoff_core.contract.task_file import parse_task
from handoff_core.errors import GitError, HandoffError
from handoff_core.files import git
from handoff_core.layout import REPORT_FILE, TASK_FILE
from handoff_core.services.evidence import pushed
from handoff_core.services.evidence.reviews import Reviews, reviews_in
from handoff_core.services.evidence.since_dispatch import Since, handoff_in, since_dispatch
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
    "audited",
    "task_verdict",
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
    not_judged: tuple[str, ...] = ()  # "path: why" for each changed path this audit leaves to another
    # Every path changed (both sides of a rename), relative to the top of the work tree, uncut: what
    # verification asks of the task's change (``acceptance``); the uncommitted paths of a worktree aside.
    paths: tuple[str, ...] = ()


def _shown(change: git.Change) -> str:
    return (
        f"{change.status} {change.old_path} -> {change.path}" if change.old_path else f"{change.status} {change.path}"
    )


def _sides(changes: list[git.Change]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(side for change in changes for side in (change.path, change.old_path) if side))


def _judged(rule: ScopeRule, top: str, change: git.Change, prefix: str) -> list[Violation]:
    found = []
    if (why := rule.judge(f"{top}/{change.path}")) is not None:
        verb = "deleted" if change.status == "D" else "written"
        found.append(Violation(change.path, f"{prefix}{verb}, {why}"))
    if change.old_path and (why := rule.judge(f"{top}/{change.old_path}")) is not None:
        found.append(Violation(change.old_path, f"{prefix}renamed away (its deleted side), {why}"))
    return found


def _set_aside(reviews: Reviews, base_dir: str, dirty: list[git.Change]) -> tuple[list[git.Change], list[str]]:
    """The uncommitted paths left to judge, and those a review of the task wrote as its artifacts (its
    audit judges them), each as ``path: why``."""
    kept, aside = [], []
    for change in dirty:
        writers = {reviews.writer_of(base_dir, side) for side in (change.path, change.old_path) if side}
        if len(writers) == 1 and (writer := writers.pop()) is not None:
            aside.append(f"{change.path}: an artifact of {writer}, which its audit judges")
        else:
            kept.append(change)
    return kept, aside


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
    if scope.workspace == "current" and not scope.worktree:
        return _current(queries, ref, rule, scope)
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
        reviews = reviews_in(queries, ref, rule.root_text)
        return _audit(
            rule,
            top,
            scope.base,
            checkpoint,
            shared=shared,
            dirty_then=dirty_then,
            review=bool(scope.review_of),
            reviews=reviews,
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
    reviews: Reviews | None = None,
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
    dirty, aside = _set_aside(reviews or Reviews([]), base_dir, dirty)
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
        not_judged=tuple(aside[:MAX_LISTED]),
        paths=_sides(changes + (dirty if shared else [])),
    )


def _current(queries: Queries, ref: Ref, rule: ScopeRule, scope: Scope) -> Audit:
    """A ``current`` task: what changed in the shared tree since dispatch, judged against its scope."""
    checkpoint = _checkpoint(queries, ref)
    if checkpoint is None:
        return Audit(verdict="unknown", reason="no REPORT yet: nothing to audit", base=scope.base)
    checkpoint = checkpoint if COMMIT_RE.match(checkpoint) else ""  # recorded; the tree is judged as it is
    made = partial(Audit, base=scope.base, checkpoint=checkpoint)
    top = git.work_tree_of(rule.root)
    if top is None or (scope.base and not COMMIT_RE.match(scope.base)):
        return made(verdict="unknown", reason="the project is in no git repository, or the base is no commit id")
    try:
        since = since_dispatch(top, scope.base, scope.dirty, handoff_in(top, rule.state))
        if since.problem:
            return made(verdict="unknown", reason=since.problem)
        dirty, aside = _set_aside(reviews_in(queries, ref, rule.root_text), str(top), since.dirty)
    except GitError as exc:
        return made(verdict="unknown", reason=exc.message)
    base_dir = str(top)
    violations = [v for change in since.changes for v in _judged(rule, base_dir, change, "committed since dispatch, ")]
    violations += [v for change in dirty for v in _judged(rule, base_dir, change, "uncommitted, ")]
    violations += [v for c in since.undone for v in _judged(rule, base_dir, c, "dirty at dispatch and clean now, ")]
    unseen = [f"{path}: {why}" for path, why in since.unseen if rule.judge(f"{base_dir}/{path}") is not None]
    judged = len(since.changes) + len(dirty) + len(since.undone)
    verdict, reason = _current_verdict(rule.described(), judged, len(violations), len(unseen))
    return made(
        verdict=verdict,
        reason=reason,
        changed=tuple(_shown(c) for c in [*since.changes, *since.undone][:MAX_LISTED]),
        violations=tuple(violations[:MAX_LISTED]),
        dirty=tuple(_shown(d) for d in dirty[:MAX_LISTED]),
        changed_count=len(since.changes) + len(since.undone),
        not_judged=tuple([*aside, *unseen, *_in_scope(rule, base_dir, since)][:MAX_LISTED]),
        paths=_sides([*since.changes, *dirty, *since.undone]),
    )


def _in_scope(rule: ScopeRule, base_dir: str, since: Since) -> list[str]:
    """Unseen paths the scope allows anyway: not judged, and no finding whatever happened to them."""
    return [f"{path}: {why} (in the scope)" for path, why in since.unseen if rule.judge(f"{base_dir}/{path}") is None]


def _current_verdict(scope: str, judged: int, outside: int, unseen: int) -> tuple[Verdict, str]:
    """Findings fail, whoever made them; unseen paths outside the scope leave it unknown; else it passes."""
    if outside:
        return "failed", (
            f"{outside} violation(s): paths changed since dispatch outside the TASK's scope ({scope}). The project "
            "tree is shared: another writer (the Lead, a task before this one) may have changed them; check each "
            "before blaming this task"
        )
    if unseen:
        return "unknown", (
            f"every path changed since dispatch that can be judged ({judged}) lies in the TASK's scope ({scope}); "
            f"{unseen} path(s) outside it cannot be judged (not_judged says why): a change to them would not show"
        )
    return "passed", (
        f"every path changed since dispatch ({judged}) lies in the TASK's scope ({scope}); the project tree is "
        "shared, so they need not all be this task's"
    )


def _verdict(queries: Queries, ref: Ref) -> str:
    try:
        return audit_task(queries, ref).verdict
    except HandoffError:  # its TASK cannot be read now: status says so elsewhere
        return "unknown"


def audited(scope: Scope) -> bool:
    """Whether the status views audit a task of ``scope``: in a worktree of its own, or ``current`` with
    git's state recorded at dispatch (a shared tree, judged since then); not a read-only task sharing
    the tree, nor one dispatched outside git."""
    return bool(scope.worktree) or (scope.workspace == "current" and bool(scope.base or scope.dirty))


def task_verdict(queries: Queries, ref: Ref) -> str:
    """The audit verdict of a task the status views audit (``audited``); empty for any other."""
    try:
        scope = queries.read_task(ref)[0].scope
    except HandoffError:
        return ""
    return _verdict(queries, ref) if audited(scope) else ""


MAX_AUDITS = 16  # audits run for one status page: each costs a few git calls


def audit_verdicts(queries: Queries, statuses: list[TaskStatus], limit: int = MAX_AUDITS) -> dict[Ref, str]:
    """The audit verdict of each returned task among ``statuses`` that the views audit (the first
    ``limit``); the rest are said to be left to ``audit_task``."""
    wanted = [s.ref for s in statuses if s.state == "returned" and s.scope is not None and audited(s.scope)]
    verdicts = {ref: _verdict(queries, ref) for ref in wanted[:limit]}
    return verdicts | dict.fromkeys(wanted[limit:], "not audited here: call audit_task")

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
from collections.abc import Callable
from functools import partial
from pathlib import Path

from handoff_core.contract.anchor import TASK_CHANGED
from handoff_core.contract.ids import Ref
from handoff_core.contract.report import COMMIT_RE
from handoff_core.contract.scope import Scope
from handoff_core.contract.task_file import parse_task
from handoff_core.errors import GitError, HandoffError
from handoff_core.files import git, git_process
from handoff_core.layout import TASK_FILE, Conclusion
from handoff_core.services.evidence import pushed
from handoff_core.services.evidence.audit_record import (
    MAX_LISTED,
    Audit,
    Violation,
    judged,
    judged_all,
    report_checkpoint,
    set_aside,
    shown,
    sides,
)
from handoff_core.services.evidence.current_audit import audit_current, theirs
from handoff_core.services.evidence.effects import (
    Effects,
    RemoteAnswers,
    crossed,
    current_effects,
    pushed_effects,
    worktree_effects,
)
from handoff_core.services.evidence.reviews import Reviews, reviews_in
from handoff_core.services.evidence.task_pin import actions_in_effect
from handoff_core.services.rules.scope_rule import ScopeRule
from handoff_core.services.tree.queries import Queries
from handoff_core.services.tree.status import TaskStatus

__all__ = [
    "MAX_AUDITS",
    "MAX_LISTED",
    "Audit",
    "Violation",
    "audit_task",
    "audit_verdicts",
    "audited",
    "task_verdict",
]

SHARED_TREE = "the task shares the project tree with other writers: its changes cannot be attributed to it"


def _left_over(rule: ScopeRule, base_dir: str, dirty: list[git_process.Change], review: bool) -> list[Violation]:
    """Each uncommitted or untracked path fails the audit; the scope rule says whether it was allowed at all.
    A review commits nothing: its artifacts are left uncommitted, and only a path outside them fails."""
    found = []
    for change in dirty:
        said = judged(rule, base_dir, change, "uncommitted (not in the checkpoint), ")
        found += said
        if not review and change.path not in {v.path for v in said}:
            found.append(Violation(change.path, "uncommitted: not in the checkpoint"))
    return found


def audit_task(queries: Queries, ref: Ref, asked: RemoteAnswers | None = None) -> Audit:
    """The audit of ``ref``; ``asked``: the git remotes' answers a batch of audits shares."""
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
    allowed, asked = actions_in_effect(scope), asked or RemoteAnswers()
    with_crossings = partial(crossed, state_root=rule.state, project=rule.project, ref=str(ref), root=rule.root_text)
    if scope.workspace == "current" and not scope.worktree:
        effects = partial(current_effects, allowed=allowed, asked=asked)
        return audit_current(queries, ref, rule, scope, lambda *given: with_crossings(effects(*given)))
    if not scope.base:
        return Audit(verdict="unknown", reason="the TASK records no base commit: it was dispatched without git")
    checkpoint = report_checkpoint(queries, ref)
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
            repo = git.work_tree_of(top) or top
            found = pushed.fetched(repo, str(ref), scope, checkpoint)
            if isinstance(found, str):
                return Audit(verdict="unknown", reason=found, base=scope.base, checkpoint=checkpoint)
            remote = partial(_alone, partial(pushed_effects, repo, scope.branch, scope.remote, scope.base,
                                             checkpoint, allowed, asked))  # fmt: skip
            return _audit(
                rule, top, scope.base, checkpoint, shared=False, dirty_then=set(), found=found, effects=remote
            )
        shared, dirty_then = not scope.worktree, set(scope.dirty)
        reviews = reviews_in(queries, ref, rule.root_text)
        # started now, beside the audit's own git; judged after it
        pending = None if shared else worktree_effects(top, scope.branch, scope.base, checkpoint, allowed, asked)
        return _audit(
            rule,
            top,
            scope.base,
            checkpoint,
            shared=shared,
            dirty_then=dirty_then,
            review=bool(scope.review_of),
            reviews=reviews,
            effects=None if pending is None else partial(_then, with_crossings, pending),
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
    effects: Callable[[git.Evidence | None], Effects] | None = None,
) -> Audit:
    made = partial(Audit, base=base, checkpoint=checkpoint, worktree=str(top) if not shared else "")
    # git names paths from the top of the work tree, which a current task's project root may lie below
    base_dir = str(top) if not shared else str(git.work_tree_of(top) or top)
    judged: list[list[Violation]] = []  # the change judged while the work tree's git runs
    read = found
    try:
        read = found or git.evidence(top, base, checkpoint, lambda c: judged.append(judged_all(rule, base_dir, c, "")))
    finally:  # the effects' git processes read (and reaped) whatever the evidence's did
        done = _read(effects, read)
    found = read
    descends = found.descends
    if descends is None:
        return made(
            verdict="unknown", reason=f"the checkpoint {checkpoint} or the base is not a commit of this repository"
        )
    if not descends:
        return made(verdict="unknown", reason="the checkpoint does not descend from the base commit")
    if isinstance(done, GitError):  # said once the checkpoint is known to be one
        raise done
    changes = found.changes
    dirty = [d for d in found.dirty if not ({d.path, d.old_path} - {None} <= dirty_then)]
    violations = judged[0] if judged else judged_all(rule, base_dir, changes, "")
    if not shared and found.head != checkpoint:  # later commits are work the checkpoint does not hold
        violations.append(Violation("HEAD", f"the worktree is at {found.head}, past the checkpoint: not audited"))
    dirty, aside, writers = set_aside(reviews or Reviews([]), base_dir, dirty, done.others)
    violations += _left_over(rule, base_dir, dirty, review=review)
    violations += [Violation(what, why) for what, why in done.violations]
    aside += done.notes
    if shared:
        verdict: Conclusion = "unknown"
        reason = SHARED_TREE
    elif violations:
        verdict, reason = "failed", f"{len(violations)} violation(s) of the TASK ({rule.described()})"
    elif undecided := done.undecided or theirs(writers):
        verdict, reason = "unknown", f"every changed path lies in the TASK's scope, but {undecided}"
    else:
        verdict, reason = "passed", f"every changed path lies in the TASK's scope ({rule.described()})"
    return made(
        verdict=verdict,
        reason=reason,
        changed=tuple(shown(c) for c in changes[:MAX_LISTED]),
        violations=tuple(violations[:MAX_LISTED]),
        dirty=tuple(shown(d) for d in dirty[:MAX_LISTED]),
        changed_count=len(changes),
        not_judged=tuple(aside[:MAX_LISTED]),
        paths=sides(changes + (dirty if shared else [])),
    )


def _then(
    after: Callable[[Effects], Effects], judge: Callable[[git.Evidence | None], Effects], found: git.Evidence | None
) -> Effects:
    return after(judge(found))


def _alone(effects: Callable[[], Effects], found: git.Evidence | None) -> Effects:
    """Effects that list the commits themselves (a pushed task's, from what was fetched): ``found`` aside."""
    del found
    return effects()


def _read(effects: Callable[[git.Evidence | None], Effects] | None, found: git.Evidence | None) -> Effects | GitError:
    try:
        return effects(found) if effects is not None else Effects([], [])
    except GitError as exc:
        return exc


def _verdict(queries: Queries, ref: Ref, asked: RemoteAnswers | None = None) -> str:
    try:
        return audit_task(queries, ref, asked).verdict
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


def audit_verdicts(
    queries: Queries, statuses: list[TaskStatus], limit: int = MAX_AUDITS, asked: RemoteAnswers | None = None
) -> dict[Ref, str]:
    """The audit verdict of each returned task among ``statuses`` that the views audit (the first
    ``limit``, each git remote asked once); the rest are said to be left to ``audit_task``."""
    wanted = [s.ref for s in statuses if s.state == "returned" and s.scope is not None and audited(s.scope)]
    asked = asked or RemoteAnswers()
    verdicts = {ref: _verdict(queries, ref, asked) for ref in wanted[:limit]}
    return verdicts | dict.fromkeys(wanted[limit:], "not audited here: call audit_task")

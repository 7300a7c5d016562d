"""The audit of a ``current`` task: what changed in the shared project tree since its dispatch
(``since_dispatch``) and what git shows of it since (``effects``), judged against its TASK.

A path outside its scope, or a git action it does not authorise, is a finding that may be another
writer's (the tree is shared: the Lead, a task before it); a path dirty at dispatch is named as not
judged, and leaves the verdict ``unknown`` when it lies outside the scope. A review's artifacts, and
a path another task's command wrote (``crossings``), are set aside, naming their writer.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from handoff_core.contract.ids import Ref
from handoff_core.contract.report import COMMIT_RE
from handoff_core.contract.scope import Scope
from handoff_core.errors import GitError
from handoff_core.files import git
from handoff_core.layout import Conclusion
from handoff_core.services.evidence.audit_record import (
    MAX_LISTED,
    Audit,
    Violation,
    judged,
    report_checkpoint,
    set_aside,
    shown,
    sides,
)
from handoff_core.services.evidence.effects import Effects
from handoff_core.services.evidence.reviews import reviews_in
from handoff_core.services.evidence.since_dispatch import Since, handoff_in, since_dispatch
from handoff_core.services.rules.scope_rule import ScopeRule
from handoff_core.services.tree.queries import Queries

__all__ = ["audit_current", "theirs"]


def audit_current(queries: Queries, ref: Ref, rule: ScopeRule, scope: Scope, effects: Callable[..., Effects]) -> Audit:
    """``effects(top, base, head)``: what git shows of the task since dispatch."""
    checkpoint = report_checkpoint(queries, ref)
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
        done = effects(top, scope.base, git.rev_parse(top, "HEAD"))
        dirty, aside, writers = set_aside(reviews_in(queries, ref, rule.root_text), str(top), since.dirty, done.others)
    except GitError as exc:
        return made(verdict="unknown", reason=exc.message)
    base_dir = str(top)
    violations = [Violation(what, why) for what, why in done.violations]
    violations += [v for change in since.changes for v in judged(rule, base_dir, change, "committed since dispatch, ")]
    violations += [v for change in dirty for v in judged(rule, base_dir, change, "uncommitted, ")]
    violations += [v for c in since.undone for v in judged(rule, base_dir, c, "dirty at dispatch and clean now, ")]
    unseen = [f"{path}: {why}" for path, why in since.unseen if rule.judge(f"{base_dir}/{path}") is not None]
    count = len(since.changes) + len(dirty) + len(since.undone)
    undecided = done.undecided or theirs(writers)
    verdict, reason = _verdict(rule.described(), count, len(violations), len(unseen), undecided)
    return made(
        verdict=verdict,
        reason=reason,
        changed=tuple(shown(c) for c in [*since.changes, *since.undone][:MAX_LISTED]),
        violations=tuple(violations[:MAX_LISTED]),
        dirty=tuple(shown(d) for d in dirty[:MAX_LISTED]),
        changed_count=len(since.changes) + len(since.undone),
        not_judged=tuple([*aside, *unseen, *done.notes, *_in_scope(rule, base_dir, since)][:MAX_LISTED]),
        paths=sides([*since.changes, *dirty, *since.undone]),
    )


def theirs(writers: list[str]) -> str:
    """Why a tree holding another task's writes is not passed (nor failed: they are not this task's)."""
    if not writers:
        return ""
    return (
        f"the tree holds changes a command of {', '.join(writers)} made (not_judged names them): not this task's, "
        "and its work is not judged whole with them there; put them back and audit again"
    )


def _in_scope(rule: ScopeRule, base_dir: str, since: Since) -> list[str]:
    """Unseen paths the scope allows anyway: not judged, and no finding whatever happened to them."""
    return [f"{path}: {why} (in the scope)" for path, why in since.unseen if rule.judge(f"{base_dir}/{path}") is None]


def _verdict(scope: str, count: int, outside: int, unseen: int, undecided: str) -> tuple[Conclusion, str]:
    """Findings fail, whoever made them; unseen paths outside the scope, or what could not be decided,
    leave it unknown; else it passes."""
    if outside:
        return "failed", (
            f"{outside} violation(s) of the TASK since dispatch: paths changed outside its scope ({scope}) or git "
            "actions it does not authorise. The project tree is shared: another writer (the Lead, a task before "
            "this one) may have made them; check each before blaming this task"
        )
    if undecided:
        return (
            "unknown",
            f"every path changed since dispatch ({count}) lies in the TASK's scope ({scope}), but {undecided}",
        )
    if unseen:
        return "unknown", (
            f"every path changed since dispatch that can be judged ({count}) lies in the TASK's scope ({scope}); "
            f"{unseen} path(s) outside it cannot be judged (not_judged says why): a change to them would not show"
        )
    return "passed", (
        f"every path changed since dispatch ({count}) lies in the TASK's scope ({scope}); the project tree is "
        "shared, so they need not all be this task's"
    )

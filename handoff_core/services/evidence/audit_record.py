"""An audit's answer, and what every audit judges with: each change shown and judged by the one
scope rule, the REPORT's checkpoint, and the uncommitted paths an audit leaves to another judgement
(a review's artifacts; a path another task's command wrote, ``crossings``)."""

from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter, itemgetter

from handoff_core.contract.ids import Ref
from handoff_core.contract.report import header_fields
from handoff_core.files import git_process
from handoff_core.layout import REPORT_FILE, Conclusion
from handoff_core.services.evidence.reviews import Reviews
from handoff_core.services.rules.scope_rule import ScopeRule
from handoff_core.services.tree.queries import Queries

__all__ = [
    "MAX_LISTED",
    "Audit",
    "Violation",
    "judged",
    "report_checkpoint",
    "set_aside",
    "shown",
    "sides",
]

MAX_LISTED = 200  # paths listed per answer; the counts say how many there were


@dataclass(frozen=True)
class Violation:
    path: str
    why: str


@dataclass(frozen=True, kw_only=True)
class Audit:
    verdict: Conclusion
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


def shown(change: git_process.Change) -> str:
    return (
        f"{change.status} {change.old_path} -> {change.path}" if change.old_path else f"{change.status} {change.path}"
    )


def sides(changes: list[git_process.Change]) -> tuple[str, ...]:
    if all(change.old_path is None for change in changes):  # no rename: each change has one side
        return tuple(dict.fromkeys([change.path for change in changes if change.path]))
    return tuple(dict.fromkeys(side for change in changes for side in (change.path, change.old_path) if side))


def judged(rule: ScopeRule, top: str, change: git_process.Change, prefix: str) -> list[Violation]:
    found = []
    if (why := rule.judge(f"{top}/{change.path}")) is not None:
        verb = "deleted" if change.status == "D" else "written"
        found.append(Violation(change.path, f"{prefix}{verb}, {why}"))
    if change.old_path and (why := rule.judge(f"{top}/{change.old_path}")) is not None:
        found.append(Violation(change.old_path, f"{prefix}renamed away (its deleted side), {why}"))
    return found


def judged_all(rule: ScopeRule, top: str, changes: list[git_process.Change], prefix: str) -> list[Violation]:
    """``judged`` of each change, in order; a change whose sides the TASK's globs plainly allow
    (``ScopeRule.plainly_allowed``) passes at a regex match a side."""
    plain = rule.plainly_allowed(top)
    if plain is None:
        return [v for change in changes for v in judged(rule, top, change, prefix)]
    if rule.all_plainly_allowed(top, [*map(attrgetter("path"), changes), *filter(None, map(itemgetter(2), changes))]):
        return []  # every side allowed (the common case), found with no Python call a change
    return [
        v
        for change in changes
        if not (plain(change.path) and (change.old_path is None or plain(change.old_path)))
        for v in judged(rule, top, change, prefix)
    ]


def set_aside(
    reviews: Reviews, base_dir: str, dirty: list[git_process.Change], others: tuple[tuple[str, str], ...] = ()
) -> tuple[list[git_process.Change], list[str], list[str]]:
    """The uncommitted paths left to judge; those a review of the task wrote as its artifacts (its audit
    judges them) and those another task's command wrote (``others``: path, writer), each as ``path: why``;
    and the writers of the latter."""
    writers_of = dict(others)
    kept, aside, writers = [], [], []
    for change in dirty:
        sides = [side for side in (change.path, change.old_path) if side]
        reviewers = {reviews.writer_of(base_dir, side) for side in sides}
        if len(reviewers) == 1 and (reviewer := reviewers.pop()) is not None:
            aside.append(f"{change.path}: an artifact of {reviewer}, which its audit judges")
        elif crossed := [writers_of[side] for side in sides if side in writers_of]:
            aside.append(
                f"{change.path}: changed by a command of {crossed[0]} (its post-tool's record), and not written "
                "since: not this task's"
            )
            writers.append(crossed[0])
        else:
            kept.append(change)
    return kept, aside, list(dict.fromkeys(writers))


def report_checkpoint(queries: Queries, ref: Ref) -> str | None:
    """The REPORT's ``Source-Checkpoint`` ("" when it names none); None when there is no REPORT."""
    data = queries.read_optional(ref, REPORT_FILE)
    if data is None:
        return None
    return header_fields(data.decode("utf-8", "replace"))[0].get("Source-Checkpoint", "")

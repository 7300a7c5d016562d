"""The reviews of a task that write in its tree: a review or test observation pinned to the task's
checkpoint (``review_of``) works in the reviewed task's worktree (or the project tree the task
shared) and leaves its artifacts there, uncommitted. The reviewed task's audit sets those aside,
naming the review, whose own audit judges them; any other path stays the reviewed tree's finding.

Only a review's TASK as the Lead published it counts: with the Lead's anchor, a review TASK that does
not verify (rewritten, or written by hand) sets nothing aside.
"""

from __future__ import annotations

import os
from pathlib import Path

from handoff_core.contract.anchor import anchor_state
from handoff_core.contract.ids import Ref, task_number
from handoff_core.contract.task_file import parse_task
from handoff_core.errors import HandoffError
from handoff_core.files.paths import walked
from handoff_core.layout import REVIEWING_KINDS, TASK_FILE, task_parts
from handoff_core.services.rules.scope_rule import ScopeRule
from handoff_core.services.tree.queries import Queries

__all__ = ["Reviews", "reviews_in"]


class Reviews:
    """The published reviews of one task that write in its tree, each with its scope rule."""

    def __init__(self, found: list[tuple[Ref, ScopeRule]]) -> None:
        self.found = found

    def writer_of(self, top: str, path: str) -> Ref | None:
        """The review whose artifacts hold ``path`` (relative to the work tree ``top``), or None."""
        return next((ref for ref, rule in self.found if rule.judge(f"{top}/{path}") is None), None)


def _round_names(queries: Queries, ref: Ref) -> list[str]:
    with walked(queries.roots.state_root, task_parts(ref.change, ref.session, ref.task)[:-1]) as fd:
        return sorted(name for name in os.listdir(fd) if task_number(name) is not None and name != ref.task)


def _review_rule(queries: Queries, reviewed: Ref, other: Ref, root: str) -> ScopeRule | None:
    """``other``'s scope rule when it is a published review of ``reviewed`` writing in ``root``."""
    data = queries.read_optional(other, TASK_FILE)
    if data is None or f'review_of: "{reviewed}"'.encode() not in data:
        return None
    anchor = queries.anchor
    if anchor is not None and anchor_state(anchor.key, str(other), data) != "anchored":
        return None  # not the TASK the Lead published: its artifacts excuse nothing
    task = parse_task(data.decode("utf-8", "replace").removeprefix("\ufeff"))
    if task.kind not in REVIEWING_KINDS or task.scope.review_of != str(reviewed):
        return None
    roots = queries.roots
    rule = ScopeRule(
        task, str(other), Path(os.path.realpath(roots.project_root)), Path(os.path.realpath(roots.state_root))
    )
    return rule if rule.root_text == root else None


def reviews_in(queries: Queries, reviewed: Ref, root: str) -> Reviews:
    """The reviews of ``reviewed`` (they stay in its round) that write in ``root``; none when the round
    cannot be read (nothing is set aside that cannot be shown to be a review's)."""
    try:
        names = _round_names(queries, reviewed)
    except (HandoffError, OSError):
        return Reviews([])
    found = []
    for name in names:
        other = Ref(reviewed.change, reviewed.session, name)
        try:
            rule = _review_rule(queries, reviewed, other, root)
        except (HandoffError, OSError):
            continue  # a TASK that cannot be read is no review that can be shown
        if rule is not None:
            found.append((other, rule))
    return Reviews(found)

"""Whether a change can be archived now: the tasks whose writers must end first.

An archived change is frozen, so a REPORT still to come could never land [seed 000
workflow-state-and-lifecycle: 归档前仍核对 writer 已停止，不因 REPORT 显示 completed 就移动活动工作区].
Every outstanding task of the change (TASK, no REPORT, no RELEASE) must end first, original-contract
ones included: they are out of a new dispatch's scan, not proven stopped. The server never archives;
this is the check the Lead runs before it does.
"""

from __future__ import annotations

from dataclasses import dataclass

from handoff_core.services.tree.queries import Queries
from handoff_core.services.tree.status import TaskStatus

__all__ = ["ArchiveCheck", "archive_check", "archive_check_of"]

MAX_NAMED = 20  # writers named in one line; the status view ``outstanding`` pages them all


@dataclass(frozen=True)
class ArchiveCheck:
    change: str
    must_end: tuple[TaskStatus, ...]

    @property
    def archivable(self) -> bool:
        return not self.must_end

    def describe(self) -> str:
        if self.archivable:
            return f"{self.change}: no outstanding writer; it may be archived"
        listed = ", ".join(f"{t.ref} ({t.claim or t.kind or 'unreadable'})" for t in self.must_end[:MAX_NAMED])
        more = (
            f" and {len(self.must_end) - MAX_NAMED} more (view outstanding)" if len(self.must_end) > MAX_NAMED else ""
        )
        return (
            f"{self.change}: not archivable yet; these writers must end first (a REPORT, or release_writer with "
            f"evidence): {listed}{more}"
        )


def archive_check_of(change: str, tasks: list[TaskStatus]) -> ArchiveCheck:
    """The check from a status already read (``tasks``, the change's and maybe others')."""
    return ArchiveCheck(change, tuple(t for t in tasks if t.outstanding and t.ref.change == change))


def archive_check(queries: Queries, change: str) -> ArchiveCheck:
    return archive_check_of(change, queries.status(change))

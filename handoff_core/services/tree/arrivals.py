"""Arrivals: which tasks' REPORT.md (or else RELEASE.md) ends their claim now; strays remembered by stat."""

from __future__ import annotations

from pathlib import Path

from handoff_core.contract.ids import Ref
from handoff_core.contract.validate import closes_claim
from handoff_core.errors import HandoffError
from handoff_core.files.entries import stamp_of
from handoff_core.files.paths import entry_mode
from handoff_core.files.task_dir import TaskDir, open_task_dir
from handoff_core.layout import CLOSING_FILES

__all__ = ["Arrivals", "ends_claim"]

MAX_REMEMBERED_STRAYS = 4096  # stray closing entries remembered by stat (a wait lists at most 50 tasks)


def _ends_claim(task_dir: TaskDir, name: str) -> bool:
    return task_dir.has(name) and closes_claim(task_dir.entry(name), name, task_dir.ref.session, task_dir.ref.task)


def ends_claim(state_root: Path, ref: Ref, name: str) -> bool:
    """Whether the task's ``name`` (REPORT.md or RELEASE.md) ends its claim now, as the claims judge it."""
    try:
        with open_task_dir(state_root, ref, active_only=False) as task_dir:
            return _ends_claim(task_dir, name)
    except (HandoffError, OSError):
        return False  # no such task (any more), or unreadable: nothing arrived


class Arrivals:
    """The arrivals of one state root, remembering the closing entries judged to end nothing."""

    def __init__(self, state_root: Path) -> None:
        self.state_root = state_root
        self._ends_nothing: dict[tuple[Ref, str], tuple[int, ...]] = {}  # closing names judged to end nothing

    def of(self, refs: list[Ref]) -> dict[Ref, str]:
        """Which of ``refs`` have a closing file that ends their claim now (``Queries.arrivals``)."""
        found: dict[Ref, str] = {}
        for ref in refs:
            with open_task_dir(self.state_root, ref, active_only=False) as task_dir:
                name = next((n for n in CLOSING_FILES if self._arrived(task_dir, n)), None)
            if name is not None:
                found[ref] = name
        return found

    def _arrived(self, task_dir: TaskDir, name: str) -> bool:
        """``_ends_claim``, remembering an entry that ends nothing by its stat: a wait polls ten times
        a second, and a stray file of 4 MiB is not read again until it changes."""
        info = entry_mode(task_dir.fd, name)
        if info is None:
            return False
        key, seen = (task_dir.ref, name), (*stamp_of(info), info.st_ctime_ns, info.st_mode)
        if self._ends_nothing.get(key) == seen:
            return False
        if _ends_claim(task_dir, name):
            self._ends_nothing.pop(key, None)
            return True
        if len(self._ends_nothing) >= MAX_REMEMBERED_STRAYS:
            self._ends_nothing.clear()
        self._ends_nothing[key] = seen
        return False

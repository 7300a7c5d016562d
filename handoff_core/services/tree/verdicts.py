"""Verdicts on task directories that have not changed since they were judged: a warm status
probes every directory but reads and judges only what changed.

Why a probe is enough. A probe is the directory's own lstat, its entry names and, per handoff
file, its lstat (device, inode, mode, links, size, mtime_ns, ctime_ns). Handoff files are
published by linking a finished temp file, so a new or replaced file has a new (device, inode); an
edit in place, a chmod or a new hard link sets ctime, which nobody can set back; a temp file or a
stray changes the names, and with them the directory's mtime and ctime, which is why a held
directory is probed by stat calls alone (no open, no listing: ``reader``).
What a probe cannot tell apart is a second same-size write inside one timestamp tick of the first:
so a verdict is kept only when every ctime it saw is ``settle`` older than the walk (the way git
treats a "racily clean" index entry). A fresh process may start from the verdicts an earlier one
kept on disk (``disk_cache``): they are held on the same terms, each used only for its own probe.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from handoff_core.contract.anchor import TaskAnchor
from handoff_core.contract.change import ChangeFacts
from handoff_core.contract.ids import Ref
from handoff_core.contract.snapshot import Probe, TaskSnapshot, probe_ctimes
from handoff_core.services.tree.status import TaskStatus, glance, task_status

__all__ = ["SETTLE_SECONDS", "Verdicts"]

SETTLE_SECONDS = 2.0  # above any file system's timestamp granularity (FAT: 2 s; ext4, xfs: one clock tick)

_Place = tuple[str, str, str]
_Key = tuple[ChangeFacts, int, Probe]


class _Held(NamedTuple):
    key: _Key
    status: TaskStatus


class Verdicts:
    def __init__(self, settle_seconds: float = SETTLE_SECONDS) -> None:
        self.settle_ns = int(settle_seconds * 1e9)
        self._held: dict[_Place, _Held] = {}

    def names(self, change: str, session: str, task: str) -> tuple[str, ...] | None:
        """The entry names of a task directory as judged, when a verdict on it is held."""
        held = self._held.get((change, session, task))
        return None if held is None else held.key[2][1]

    def holds(self, facts: ChangeFacts, session: str, task: str, same: int, probe: Probe) -> bool:
        """Whether a verdict is held for exactly this probe (called by the reader, per task)."""
        held = self._held.get((facts.change, session, task))
        return held is not None and held.key[1:] == (same, probe) and held.key[0] == facts

    def judge(
        self,
        place: _Place,
        snapshot: TaskSnapshot,
        began_ns: int,
        reread: Callable[[Ref], TaskSnapshot],
        *,
        glancing: bool = False,
        anchor: TaskAnchor | None = None,
    ) -> TaskStatus:
        """The status of the task at ``place`` (change, round, task): the held verdict when the snapshot
        reused it, else judged (and held if settled). ``glancing``: a settled task that a glance
        decides is glanced instead (``status.glance``), and nothing is held for it."""
        if snapshot.reused:
            held = self._held.get(place)
            if held is not None and held.key == (snapshot.change, snapshot.same_number, snapshot.probe):
                return held.status
            snapshot = reread(Ref(*place))  # another walk replaced the verdict after this one's probe
        settled = snapshot.probe is not None and self._settled(snapshot.probe, began_ns)
        # Unsettled files are judged at once: a verdict on them is not held, so a later walk could
        # never take a glance's place with one.
        if glancing and settled and (glanced := glance(Ref(*place), snapshot)) is not None:
            return glanced
        status = task_status(Ref(*place), snapshot, anchor)
        if settled and snapshot.probe is not None and snapshot.change is not None:
            self._held[place] = _Held((snapshot.change, snapshot.same_number, snapshot.probe), status)
        return status

    def _settled(self, probe: Probe, began_ns: int) -> bool:
        last = began_ns - self.settle_ns
        return all(ctime < last for ctime in probe_ctimes(probe))

    def __len__(self) -> int:
        return len(self._held)

    @property
    def expects_reuse(self) -> bool:
        """Whether a walk will mostly find verdicts to reuse."""
        return bool(self._held)

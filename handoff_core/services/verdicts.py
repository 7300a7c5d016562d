"""Verdicts on task directories that have not changed since they were judged: a warm status
probes every directory but reads and judges only what changed.

Why a probe is enough. A probe is the directory's entry names and, per handoff file, its lstat
(device, inode, mode, links, size, mtime_ns, ctime_ns). Handoff files are published by linking a
finished temp file, so a new or replaced file has a new (device, inode); an edit in place, a chmod
or a new hard link sets ctime, which nobody can set back; a temp file or a stray changes the names.
What a probe cannot tell apart is a second same-size write inside one timestamp tick of the first:
so a verdict is kept only when every ctime it saw is ``settle`` older than the walk (the way git
treats a "racily clean" index entry). Nothing outlives the process, so nothing needs invalidating
but this memory.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from handoff_core.contract.change import ChangeFacts
from handoff_core.contract.ids import Ref
from handoff_core.contract.snapshot import Probe, TaskSnapshot
from handoff_core.services.status import TaskStatus, task_status

__all__ = ["SETTLE_SECONDS", "Verdicts"]

SETTLE_SECONDS = 2.0  # above any file system's timestamp granularity (FAT: 2 s; ext4, xfs: one clock tick)

_Place = tuple[str, str, str]
_Key = tuple[ChangeFacts, int, Probe]


@dataclass(frozen=True)
class _Held:
    key: _Key
    status: TaskStatus


class Verdicts:
    def __init__(self, settle_seconds: float = SETTLE_SECONDS) -> None:
        self._settle_ns = int(settle_seconds * 1e9)
        self._held: dict[_Place, _Held] = {}

    def holds(self, facts: ChangeFacts, session: str, task: str, same: int, probe: Probe) -> bool:
        """Whether a verdict is held for exactly this probe (called by the reader, per task)."""
        held = self._held.get((facts.change, session, task))
        return held is not None and held.key[1:] == (same, probe) and held.key[0] == facts

    def judge(self, ref: Ref, snapshot: TaskSnapshot, began_ns: int, reread: Callable[[], TaskSnapshot]) -> TaskStatus:
        """The task's status: the held verdict when the snapshot reused it, else judged (and kept if settled)."""
        place = (ref.change, ref.session, ref.task)
        if snapshot.reused:
            held = self._held.get(place)
            if held is not None and held.key == (snapshot.change, snapshot.same_number, snapshot.probe):
                return held.status
            snapshot = reread()  # another walk replaced the verdict after this one's probe: read afresh
        status = task_status(ref, snapshot)
        if snapshot.probe is not None and snapshot.change is not None and self._settled(snapshot.probe, began_ns):
            self._held[place] = _Held((snapshot.change, snapshot.same_number, snapshot.probe), status)
        return status

    def _settled(self, probe: Probe, began_ns: int) -> bool:
        return all(stamp[-1] < began_ns - self._settle_ns for stamp in probe[1])

    def __len__(self) -> int:
        return len(self._held)

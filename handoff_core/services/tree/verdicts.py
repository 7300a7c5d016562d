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

import hashlib
import json
from collections.abc import Callable
from typing import Any, NamedTuple

from handoff_core.contract.anchor import TaskAnchor
from handoff_core.contract.change import ChangeFacts
from handoff_core.contract.ids import Ref
from handoff_core.contract.snapshot import Probe, TaskSnapshot, probe_ctimes
from handoff_core.services.tree.disk_cache import decode_body, decoded, encode_body
from handoff_core.services.tree.status import TaskStatus, glance, task_status

__all__ = ["SETTLE_SECONDS", "Verdicts"]

SETTLE_SECONDS = 2.0  # above any file system's timestamp granularity (FAT: 2 s; ext4, xfs: one clock tick)

_Place = tuple[str, str, str]
_Key = tuple[ChangeFacts, int, Probe]


def key_digest(key: _Key) -> str:
    """A probe as the disk cache keeps it: a 128-bit digest of everything the verdict is keyed on."""
    return hashlib.blake2b(repr(key).encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()


class _Held(NamedTuple):
    key: _Key
    status: TaskStatus


class _Kept(NamedTuple):
    """A verdict from the disk cache, not yet matched against a probe of this process."""

    digest: str
    names: tuple[str, ...]
    body: int
    times: list[Any]


class Verdicts:
    def __init__(self, settle_seconds: float = SETTLE_SECONDS) -> None:
        self.settle_ns = int(settle_seconds * 1e9)
        self._held: dict[_Place, _Held] = {}
        self._kept: dict[_Place, _Kept] = {}
        self._bodies: list[Any] = []  # decoded bodies of ``_kept`` rows, shared by many tasks
        self.fresh = 0  # verdicts held since the last ``rows()``: what a save of the cache would add

    def names(self, change: str, session: str, task: str) -> tuple[str, ...] | None:
        """The entry names of a task directory as judged, when a verdict on it is held or kept."""
        place = (change, session, task)
        held = self._held.get(place)
        if held is not None:
            return held.key[2][1]
        kept = self._kept.get(place)
        return None if kept is None else kept.names

    def holds(self, facts: ChangeFacts, session: str, task: str, same: int, probe: Probe) -> bool:
        """Whether a verdict is held for exactly this probe (called by the reader, per task)."""
        place = (facts.change, session, task)
        held = self._held.get(place)
        if held is None and place in self._kept:
            held = self._adopt(place, (facts, same, probe))
        return held is not None and held.key[1:] == (same, probe) and held.key[0] == facts

    def _adopt(self, place: _Place, key: _Key) -> _Held | None:
        """Hold a verdict from the disk cache when its digest is this probe's, else drop it."""
        kept = self._kept.pop(place, None)
        if kept is None:  # another thread's walk adopted (or dropped) it just now
            return self._held.get(place)
        if kept.digest != key_digest(key):
            return None
        dispatched, released, closed = kept.times
        body = self._bodies[kept.body]
        status = TaskStatus(ref=Ref(*place), **body, dispatched_at=dispatched, released_at=released, closed_at=closed)
        self._held[place] = held = _Held(key, status)
        return held

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
            self._kept.pop(place, None)
            self.fresh += 1
        return status

    def _settled(self, probe: Probe, began_ns: int) -> bool:
        last = began_ns - self.settle_ns
        return all(ctime < last for ctime in probe_ctimes(probe))

    def __len__(self) -> int:
        return len(self._held)

    @property
    def expects_reuse(self) -> bool:
        """Whether a walk will mostly find verdicts to reuse (held, or kept from the disk cache)."""
        return bool(self._held or self._kept)

    def rows(self) -> dict[str, list[Any]]:
        """The held verdicts as plain rows for the disk cache: shared bodies, then a row per task."""
        self.fresh = 0
        bodies: list[list[Any]] = []
        index: dict[str, int] = {}  # a body's JSON text: the same body is kept once
        rows = []
        for place, held in list(self._held.items()):  # a copy: another thread may be walking
            status = held.status
            encoded = encode_body(status)
            body = index.setdefault(json.dumps(encoded), len(bodies))
            if body == len(bodies):
                bodies.append(encoded)
            times = [status.dispatched_at, status.released_at, status.closed_at]
            rows.append([*place, key_digest(held.key), "/".join(held.key[2][1]), body, *times])
        return {"bodies": bodies, "rows": rows}

    def restore(self, kept: object) -> None:
        """Keep an earlier process's verdicts; each is held once a probe of this process matches it."""
        bodies = decoded(kept.get("bodies", []) if isinstance(kept, dict) else [], decode_body)
        self._bodies = bodies
        for place, entry in decoded(kept.get("rows", []) if isinstance(kept, dict) else [], _decode_row):
            if entry.body < len(bodies) and place not in self._held:
                self._kept[place] = entry


def _decode_row(row: list[Any]) -> tuple[_Place, _Kept]:
    change, session, task, digest, names, body, dispatched, released, closed = row
    times = [float(dispatched), *(None if t is None else float(t) for t in (released, closed))]
    listed = tuple(str(names).split("/")) if names else ()  # "/" never occurs in a name
    return (str(change), str(session), str(task)), _Kept(str(digest), listed, int(body), times)

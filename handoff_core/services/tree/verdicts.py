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
treats a "racily clean" index entry). Nor a write through a shared memory mapping to a page it
already dirtied, which moves no time at all: so nothing is held on a file that some process held
open for writing as it was read (``files.leases``; ``reader`` gives no probe then).

Why a held verdict is small. A server holds one per task for as long as it runs (a task a full
walk no longer finds is dropped: ``forget_unseen``), so each is one tuple keyed by its status's own
``Ref``, and what many tasks say alike is held once (``Shared``): the entry names of a directory, a
scope, a kind and a report's status word. The probe is kept exact (its packed stamps), never a
digest of it: equal is equal, with no odds to argue.

Kept across restarts. A server keeps its verdicts as rows in this user's cache (``status_rows``)
after a full walk that held new ones, and a restarted server holds them before its first walk (a
Lead's server reads them ahead, once its tools are listed): each is still used only where that
walk's probe equals it, so its first answer is a warm one.

Held glances. A cold answer glances at most tasks (``status.glance``) and the judging after it
takes a while; an answer asked meanwhile would glance them all again. So each glance is held too,
on the probe of the very files it read, until the task's verdict replaces it: the next answer
probes it by stat calls as a warm one does. A glance is never a verdict: it lives apart, and only
an answer that may glance (``judge(glancing=True)``, ``Glimpses``) is given one; the judging and
every full read see the verdicts alone. Held glances and verdicts together stay one entry per task.
A glance is read without a lease: a write through a mapping opened before it was read can leave it
counting the old state until the judging reads the task again, under a lease, and holds nothing.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import NamedTuple, cast

from handoff_core.contract.anchor import TaskAnchor
from handoff_core.contract.change import ChangeFacts
from handoff_core.contract.ids import Ref
from handoff_core.contract.scope import Scope
from handoff_core.contract.snapshot import Probe, TaskSnapshot, probe_ctimes
from handoff_core.files.sightings import Sighting
from handoff_core.layout import Kind
from handoff_core.services.tree.status import TaskStatus, glance, glance_sighted, task_status

__all__ = ["SETTLE_SECONDS", "Glimpses", "Held", "Shared", "Verdicts"]

SETTLE_SECONDS = 2.0  # above any file system's timestamp granularity (FAT: 2 s; ext4, xfs: one clock tick)

_Place = tuple[str, str, str]


class Held(NamedTuple):
    """One held verdict: what it is keyed on (the change's facts, the round's count of entries with the
    task's number, the packed stamps and the entry names of the probe) and the status judged."""

    change: ChangeFacts
    same: int
    stamps: bytes
    names: tuple[str, ...]
    status: TaskStatus

    def matches(self, facts: ChangeFacts | None, same: int, probe: Probe | None) -> bool:
        if probe is None:
            return False
        return self.stamps == probe[0] and self.names == probe[1] and self.same == same and self.change == facts


class Shared:
    """Values many held verdicts say alike, each held once: a table of the first equal one seen.

    It only grows with what differs (entry-name sets, scopes, status words), never with the tasks.
    """

    def __init__(self) -> None:
        self._names: dict[tuple[str, ...], tuple[str, ...]] = {}
        self._scopes: dict[Scope, Scope] = {}

    def names(self, names: tuple[str, ...]) -> tuple[str, ...]:
        return self._names.setdefault(names, names)

    def scope(self, scope: Scope) -> Scope:
        return self._scopes.setdefault(scope, scope)

    def status(self, status: TaskStatus) -> TaskStatus:
        """``status`` with its scope and words shared with equal ones held before (an equal status)."""
        scope = status.scope if status.scope is None else self.scope(status.scope)
        kind = cast("Kind | None", status.kind and sys.intern(status.kind))
        word = status.report_status and sys.intern(status.report_status)
        if scope is status.scope and kind is status.kind and word is status.report_status:
            return status
        return status._replace(scope=scope, kind=kind, report_status=word)


class Verdicts:
    def __init__(self, settle_seconds: float = SETTLE_SECONDS) -> None:
        self.settle_ns = int(settle_seconds * 1e9)
        self._held: dict[_Place, Held] = {}  # keyed by each status's ``Ref`` (a tuple, equal to its place)
        self._glances: dict[_Place, Held] = {}  # tasks glanced and not judged since (never a verdict)
        self.shared = Shared()
        self._glances_high = 0  # the most glances held since their table was last made to fit them
        self.glimpses = Glimpses(self)
        # Whether the verdicts held were judged in a state root the Lead's secret governs: once it does,
        # a TASK without an anchor is changed, so every verdict before that is dropped (``_governed_now``).
        self._governed = False
        self.added = 0  # verdicts held since the rows were last kept (``status_rows``)

    def names(self, change: str, session: str, task: str) -> tuple[str, ...] | None:
        """The entry names of a task directory as judged, when a verdict on it is held."""
        held = self._held.get((change, session, task))
        return None if held is None else held.names

    def holds(self, facts: ChangeFacts, session: str, task: str, same: int, probe: Probe) -> bool:
        """Whether a verdict is held for exactly this probe (called by the reader, per task)."""
        held = self._held.get((facts.change, session, task))
        return held is not None and held.matches(facts, same, probe)

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
        current = self._governed_now(anchor)
        if snapshot.reused:
            for table in (self._held, self._glances) if glancing else (self._held,):
                held = table.get(place)
                if held is not None and held.matches(snapshot.change, snapshot.same_number, snapshot.probe):
                    return held.status
            snapshot = reread(Ref(*place))  # another walk replaced the verdict after this one's probe
        self._unglance(place)  # read afresh: what was glanced before is of older files
        probe = snapshot.probe
        settled = probe is not None and self._settled(probe, began_ns)
        # Unsettled files are judged at once: a verdict on them is not held, so a later walk could
        # never take a glance's place with one.
        if glancing and settled and (glanced := glance(Ref(*place), snapshot)) is not None:
            return glanced
        status = task_status(Ref(*place), snapshot, anchor)
        if settled and probe is not None and snapshot.change is not None and current:
            status = self.shared.status(status)
            names = self.shared.names(probe[1])
            self._held[status.ref] = Held(snapshot.change, snapshot.same_number, probe[0], names, status)
            self.added += 1
        return status

    def rows(self) -> list[Held]:
        """Every verdict held, as rows to keep (``status_rows``); the values copied first: the judging
        thread may add to them meanwhile."""
        return list(self._held.values())

    def take_rows(self, rows: list[Held], governed: bool) -> None:
        """Hold ``rows`` kept by a server before this one, judged in a state root ``governed`` or not:
        each is used only where a walk's probe equals it, as a verdict judged here is. What they say
        alike was shared when they were read (``status_rows.load_rows`` with ``shared``)."""
        self._governed = governed
        held = self._held
        for row in rows:
            held.setdefault(row.status.ref, row)

    def _governed_now(self, anchor: TaskAnchor | None) -> bool:
        """Drop every verdict and glance when ``anchor`` is the first to say the state root is governed;
        whether a verdict judged under ``anchor`` may be held (not one of a walk begun before that)."""
        governed = anchor is not None and anchor.governed
        if governed and not self._governed:
            self._held.clear()
            self._glances.clear()
            self._governed = True
        return governed == self._governed

    def glanced(self, change: str, session: str, task: str, seen: Sighting) -> TaskStatus | None:
        """``status.glance_sighted``, held on the sighting's probe until the task is judged."""
        status = glance_sighted(change, session, task, seen)
        if status is not None and seen.probe is not None and seen.facts is not None:
            self.hold_glance(seen.facts, status, *seen.probe)
        return status

    def hold_glance(self, facts: ChangeFacts, status: TaskStatus, stamps: bytes | None, names: tuple[str, ...]) -> None:
        """Hold a glance on the stamps and names of the files it was taken from (none: not held)."""
        if stamps is not None:
            self._glances[status.ref] = Held(facts, 1, stamps, self.shared.names(names), status)
            self._glances_high = max(self._glances_high, len(self._glances))

    def _unglance(self, place: _Place) -> None:
        """Drop the glance held on ``place``, and make the glances' table anew once three quarters of it
        are gone: a dict never shrinks, and the judging drops each glance as it holds that task's
        verdict, so a table sized for every glance would stand beside the verdicts' at their fullest."""
        if self._glances.pop(place, None) is not None and 4 * len(self._glances) <= self._glances_high:
            self._glances = dict(self._glances)  # one assignment: a reader sees the old table or the new
            self._glances_high = len(self._glances)

    def forget_glances(self) -> None:
        """Drop the glances held (once the judging is done, those left are of tasks gone or changed)."""
        self._glances.clear()
        self._glances_high = 0

    def forget_unseen(self, seen: list[TaskStatus]) -> None:
        """Drop what is held on tasks that a walk of every active change (``seen``) did not find: of a
        change archived or removed, of a task or round deleted. A server holds an entry per task there
        is, not per task there ever was. Counting what was seen costs a lookup per task (1.5–2 ms
        at 10,000 tasks); only when something held was not seen are the unseen dropped."""
        for table in (self._held, self._glances):
            if table and sum(status.ref in table for status in seen) < len(table):
                found = {status.ref for status in seen}
                for place in [place for place in list(table) if place not in found]:
                    table.pop(place, None)  # a walk running beside this one may have dropped it too

    def _settled(self, probe: Probe, began_ns: int) -> bool:
        last = began_ns - self.settle_ns
        return all(ctime < last for ctime in probe_ctimes(probe))

    def held_changes(self) -> set[str]:
        """The changes of which a verdict or a glance is held (the keys copied first: the judging
        thread may add to them meanwhile). One pass over what is held: once per walk, not per change."""
        return {place[0] for table in (self._held, self._glances) for place in list(table)}

    def __len__(self) -> int:
        return len(self._held)

    @property
    def expects_reuse(self) -> bool:
        """Whether a walk will mostly find verdicts to reuse."""
        return bool(self._held)

    @property
    def glances(self) -> int:
        """How many glances are held (for the tests and the benchmark)."""
        return len(self._glances)


class Glimpses:
    """What a glancing walk may reuse (``reader.Reuse``): a held verdict, else a held glance.

    Only a walk that glances is given this; whatever it reuses is then judged with ``glancing``,
    where a glance is taken for a glance (``judged`` False), never for a verdict.
    """

    def __init__(self, verdicts: Verdicts) -> None:
        self._verdicts = verdicts  # its tables, read each time: the glances' is made anew as it empties

    def names(self, change: str, session: str, task: str) -> tuple[str, ...] | None:
        # A glance beside a verdict was taken after it (a fresh read drops the glance): the verdict
        # is of older files, so the glance's names are the ones to probe.
        held = self._verdicts._glances.get((change, session, task)) or self._verdicts._held.get((change, session, task))
        return None if held is None else held.names

    def holds(self, facts: ChangeFacts, session: str, task: str, same: int, probe: Probe) -> bool:
        place = (facts.change, session, task)
        return any(
            held is not None and held.matches(facts, same, probe)
            for held in (self._verdicts._held.get(place), self._verdicts._glances.get(place))
        )

    def __bool__(self) -> bool:
        return bool(self._verdicts._held) or bool(self._verdicts._glances)

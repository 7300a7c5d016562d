"""Writer claims answered from memory in a long-lived server: the kernel reports what changed.

``ClaimIndex`` stats, each scan, the file every task's judgement rests on. This index instead
holds a kernel watch (``files.watches``) on exactly the inodes each judgement rests on, and each
scan re-judges only what a watch reported, so a scan with no events costs one open per active
change and a step per round: O(changes + rounds + events + open claims), not O(tasks).

Why that is as sound as the stat, and sounder:

- A watch is on an inode. Every change that can alter a judgement is made through a syscall that
  queues an event for that inode before it returns: a write or truncate (``IN_MODIFY``), a chmod,
  chown, utimes, and a hard link made or removed through any name anywhere (the link count:
  ``IN_ATTRIB``), a rename of the file (``IN_MOVE_SELF``) or over it (``IN_ATTRIB``), its removal.
  A scan drains the queue first, so a change complete before the scan is seen by it.
- What each judgement rests on, and is watched: a claim that ended, the REPORT or RELEASE that ended
  it (its bytes and its link count are the whole judgement); a task that never claims, its TASK; an
  open claim (and a reader's), its TASK, each REPORT/RELEASE present that does not close it, and
  the task directory itself (a closing file made, linked or renamed into it). A task directory
  with no TASK.md yet is watched until one appears.
- Each file's watch is added BEFORE it is read, through the name the read then uses
  (``/proc/self/fd/<dir>/<name>``, the last component never followed): a file swapped in between
  leaves an event on the watched one, and the task is judged again at the next scan. An open
  claim's directory is watched through its handle once judged, then listed again: a TASK, REPORT
  or RELEASE that came or went since the first listing has the task judged again at the next scan.
  (Watching every directory first and dropping the watch of each task found closed would flood the
  queue with one ``IN_IGNORED`` per task.)
- A round directory is watched for its entries (a task made, removed, renamed, replaced by a
  symlink, or chmodded: the child's name comes with the event), and the sessions directory for its
  rounds. The change directory and its sessions directory are opened by name each scan and
  compared, by device and inode, with the ones watched; any difference judges the change afresh.
- A task whose watch reported anything is judged afresh, by the same ``judge`` as a full scan:
  the equality of the two is a property test (tests/core/services/tree/test_watched_claims.py).
- A judgement rests on the Lead's anchor too (a TASK that does not verify holds the whole
  workspace): a scan under another anchor, or once the Lead's secret governs the state root, drops
  every watch and judges everything afresh.

Falling back, never open:

- No watch at all (a state root on a filesystem where writers may be remote or FUSE, anything
  mounted below it, no inotify, no instance to be had): ``ClaimIndex``'s scan, as a fresh process.
- A watch that cannot be had (the per-user limit, ``cap``, a name gone): that task is stat-scanned
  as ``ClaimIndex`` does until it changes; a round or sessions directory that cannot be watched:
  that round or change is scanned so each time.
- The kernel's queue overflowed, a drain read more than it may, or an event came for a watch this
  index does not know: every watch is dropped (a new inotify instance) and everything judged afresh.
- Writes through a shared memory mapping are the one change no event reports: a file opened for
  writing reports ``IN_CLOSE_WRITE`` when closed, and one whose bytes changed after it was judged
  (``IN_MODIFY``/``IN_CLOSE_WRITE``) is stat-checked each scan from then on as well, as
  ``ClaimIndex`` would. A mapping written while its file stays open is seen at its close.

A fresh process (the CLI, a hook) scans as ``ClaimIndex``; this index's judgements each rest on a
watch set before the read.
"""

from __future__ import annotations

import os
import threading
import time
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path

from handoff_core.contract.anchor import TaskAnchor
from handoff_core.contract.ids import Ref
from handoff_core.contract.snapshot import Entry
from handoff_core.errors import ChangeNotFound, HandoffError
from handoff_core.files.change_dir import locate_change
from handoff_core.files.entries import read_entry, shown_name
from handoff_core.files.paths import is_symlink, open_dir
from handoff_core.files.watches import MountTable, Watches
from handoff_core.layout import CLOSING_FILES, SESSIONS, TASK_FILE
from handoff_core.services.rules.ownership import Claim
from handoff_core.services.tree.claim_marks import Key, Marks
from handoff_core.services.tree.claims import (
    ClaimIndex,
    _restamp,
    _Seen,
    change_hold,
    judge,
    unreadable_because,
)

__all__ = ["WatchedClaimIndex"]

_JUDGED = frozenset((TASK_FILE, *CLOSING_FILES))  # what a judgement can rest on
FORGET_AT_MOST = 4096  # more watches than this to drop at once: a new instance costs less than their IN_IGNOREDs


@dataclass
class _Round:
    wd: int | None  # None: not watched, scanned by ``ClaimIndex`` each time
    tasks: set[str] = field(default_factory=set)  # judged and covered by watches (or by the round's)
    loose: set[str] = field(default_factory=set)  # judged without a watch: stat-scanned each time
    open: dict[str, _Seen] = field(default_factory=dict)  # those with a claim


@dataclass
class _Change:
    ident: tuple[int, int, int, int]  # device and inode of the change and of its sessions directory
    wd: int
    rounds: dict[str, _Round] = field(default_factory=dict)


class WatchedClaimIndex(ClaimIndex):
    """``ClaimIndex`` kept true by kernel watches rather than a stat per task (see the module)."""

    def __init__(self, cap: int | None = None, max_events: int = 1 << 16, mountinfo: Path | None = None) -> None:
        super().__init__()
        self._cap, self._max_events = cap, max_events
        self._mounts = MountTable(mountinfo or Path("/proc/self/mountinfo"))
        self._lock = threading.Lock()
        self.resets = 0  # times every watch was dropped (overflow, unknown watch)
        self.judged = 0  # tasks judged by reading their files
        self._written: dict[tuple[str, str], set[str]] = {}  # bytes changed after a judgement: stat-checked too
        self._marks = Marks(None, self._written)
        self._forget_all()

    @property
    def watches(self) -> Watches | None:
        """The inotify instance the claims rest on; None while they are stat-scanned."""
        return self._marks.watches

    def _forget_all(self) -> None:
        self._changes: dict[str, _Change] = {}
        self._wds_of: dict[Key, tuple[int, ...]] = {}

    def claims(self, root: Path, changes: list[str], anchor: TaskAnchor | None = None) -> list[Claim]:
        with self._lock:
            if self.anchored(anchor) and self._marks.watches is not None:
                self._renew()  # every judgement rested on the anchor before: all are made again
            if self._watching(root) and not self._marks.take():
                self._renew()
            if self._marks.watches is None:
                return super().claims(root, changes, anchor)
            for gone in set(self._changes) - set(changes):
                self._forget_change(gone)
            now, found = time.time(), []
            for change in changes:
                try:
                    found += self._change_claims_watched(root, change, now)
                except ChangeNotFound:
                    self._forget_change(change)
                except (HandoffError, OSError) as exc:
                    self._forget_change(change)
                    why = exc.message if isinstance(exc, HandoffError) else exc.strerror or str(exc)
                    found.append(change_hold(change, unreadable_because(change, why)))
            return found

    def _watching(self, root: Path) -> bool:
        if not self._mounts.local(root):
            self._reset(None)
            return False
        if self._marks.watches is None:
            self._renew()
        return self._marks.watches is not None

    def _renew(self) -> None:
        """Start again from a new inotify instance, or from none when none can be had (ENFILE, EMFILE,
        the per-user instance limit): every task is then scanned as ``ClaimIndex`` does."""
        try:
            watches = Watches(self._cap, self._max_events)
        except OSError:
            watches = None
        self._reset(watches)

    def _reset(self, watches: Watches | None) -> None:
        """Drop every watch at once (a new instance) and everything they kept true."""
        if self._marks.watches is not None:
            self._marks.close()
            self.resets += 1
        self._marks = Marks(watches, self._written)
        self._forget_all()

    def _forget_task(self, key: Key, round_: _Round) -> None:
        for wd in self._wds_of.pop(key, ()):
            self._marks.release(wd, ("task", key))
        task = key[2]
        round_.tasks.discard(task)
        round_.loose.discard(task)
        round_.open.pop(task, None)

    def _forget_round(self, change: str, session: str) -> None:
        state = self._changes.get(change)
        round_ = state.rounds.pop(session, None) if state is not None else None
        if round_ is None:
            return
        for task in (*round_.tasks, *round_.loose):
            self._forget_task((change, session, task), round_)
            self._seen.pop((change, session, task), None)
        if round_.wd is not None:
            self._marks.release(round_.wd, ("round", (change, session)))

    def _forget_change(self, change: str) -> None:
        self._marks.dirty.pop(change, None)
        self._marks.dirty_changes.discard(change)
        state = self._changes.get(change)
        if state is None:
            return
        if sum(len(r.tasks) + 1 for r in state.rounds.values()) > FORGET_AT_MOST:
            self._renew()
            return
        for session in list(state.rounds):
            self._forget_round(change, session)
        self._marks.release(state.wd, ("sessions", (change,)))
        del self._changes[change]

    # -- the scan ----------------------------------------------------------------------------

    def _change_claims_watched(self, root: Path, change: str, now: float) -> list[Claim]:
        with locate_change(root, change) as (facts, change_fd), ExitStack() as stack:
            if facts.location != "active" or facts.unreadable:
                self._forget_change(change)
                hold = change_hold(change, unreadable_because(change, facts.unreadable))
                return [hold] if facts.location == "active" else []
            try:
                sessions_fd = open_dir(change_fd, SESSIONS)
            except FileNotFoundError:
                self._forget_change(change)
                return []
            stack.callback(os.close, sessions_fd)
            outer, inner = os.fstat(change_fd), os.fstat(sessions_fd)
            ident = (outer.st_dev, outer.st_ino, inner.st_dev, inner.st_ino)
            state = self._changes.get(change)
            if state is None or state.ident != ident or change in self._marks.dirty_changes:
                self._forget_change(change)
                if (wd := self._marks.add(sessions_fd, "", ("sessions", (change,)))) is None:
                    return self._sessions_claims(sessions_fd, change, now)  # as a fresh scan, each time
                state = self._changes[change] = _Change(ident, wd)
                todo: dict[str, set[str] | None] = dict.fromkeys(os.listdir(sessions_fd))  # listed once watched
            else:
                todo = self._marks.dirty.pop(change, {})
                checked = {s for s, r in state.rounds.items() if r.wd is None or r.loose}
                for session in checked | {s for c, s in self._written if c == change}:
                    todo.setdefault(session, set())
            self._marks.dirty.pop(change, None)
            found = []
            for session, tasks in todo.items():
                found += self._visit_round(sessions_fd, state, change, session, tasks, now)
        for round_ in state.rounds.values():
            found += [replace(s.claim, age_seconds=max(0.0, now - s.since)) for s in round_.open.values() if s.claim]
        return found

    def _visit_round(
        self, sessions_fd: int, state: _Change, change: str, session: str, dirty: set[str] | None, now: float
    ) -> list[Claim]:
        """Judge afresh the ``dirty`` tasks of a round (None: all of them), and stat-check the rest
        that rest on no watch, or on a file written since it was judged."""
        try:
            round_fd = open_dir(sessions_fd, session)
        except FileNotFoundError:
            self._forget_round(change, session)
            self._written.pop((change, session), None)
            return []
        except (HandoffError, NotADirectoryError):
            self._forget_round(change, session)
            if is_symlink(sessions_fd, session):
                raise  # a round elsewhere may hold writers: the change holds the workspace
            return []  # a stray file is no round
        try:
            round_ = state.rounds.get(session)
            if dirty is None or round_ is None or round_.wd is None:
                self._forget_round(change, session)
                round_ = state.rounds[session] = _Round(self._marks.add(round_fd, "", ("round", (change, session))))
                if round_.wd is None:
                    return self._round_claims(round_fd, change, session, now)  # as a fresh scan, each time
                dirty = set(os.listdir(round_fd))  # listed once watched
            for task in dirty:
                self._rejudge(round_fd, (change, session, task), round_)
            for task in (round_.loose | self._written.get((change, session), set())) - dirty:
                self._check(round_fd, (change, session, task), round_)
        finally:
            os.close(round_fd)
        return []

    def _check(self, round_fd: int, key: Key, round_: _Round) -> None:
        """``ClaimIndex``'s step: a judgement with no claim stands while its file's stamp does."""
        seen = self._seen.get(key)
        if seen is None or seen.claim is not None or _restamp(round_fd, key[2], seen.file) != seen.stamp:
            self._rejudge(round_fd, key, round_)

    def _rejudge(self, round_fd: int, key: Key, round_: _Round) -> None:
        self._forget_task(key, round_)
        self._judge_watched(round_fd, key, round_)

    def _judge_watched(self, round_fd: int, key: Key, round_: _Round) -> None:
        change, session, task = key
        try:
            task_fd = open_dir(round_fd, task)
        except FileNotFoundError:
            self._seen.pop(key, None)
            self._written.get((change, session), set()).discard(task)
            return
        except (HandoffError, NotADirectoryError):
            held = self._read(round_fd, key, None)  # a symlink is held, a file is nothing: as a full scan
            if held is not None and held.claim is not None:
                round_.tasks.add(task)  # it changes only by being replaced: the round's watch reports it
                round_.open[task] = held
            return
        read: dict[str, int | None] = {}

        def watched_read(fd: int, name: str) -> Entry:
            read[name] = self._marks.add(fd, name, ("task", key))
            return read_entry(fd, name)

        directory = None
        try:
            names = os.listdir(task_fd)
            judged = judge(task_fd, Ref(change, session, shown_name(task)), names, watched_read, self._anchor)
            if judged is None or judged.claim is not None:
                # A file made in the directory can end this claim (or start one): the directory is
                # watched, then listed again; a file that came or went in between is judged next scan.
                directory = self._marks.add(task_fd, "", ("task", key))
                if _JUDGED.intersection(os.listdir(task_fd)) != _JUDGED.intersection(names):
                    self._marks.mark(change, session, task)
        finally:
            os.close(task_fd)
        self.judged += 1
        self._keep(key, round_, judged, directory, read)

    def _keep(
        self, key: Key, round_: _Round, judged: _Seen | None, directory: int | None, read: dict[str, int | None]
    ) -> None:
        """Keep the watches ``judged`` rests on (the module says which), and drop the others."""
        task = key[2]
        if judged is None:  # no TASK.md yet: its directory's watch reports one
            needed: list[int | None] = [directory]
            self._seen.pop(key, None)
        elif judged.claim is None:
            needed = [read.get(judged.file)]
        else:
            needed = [directory, *read.values()]
        kept = tuple(wd for wd in needed if wd is not None)
        for wd in {directory, *read.values()} - set(kept):
            if wd is not None:
                self._marks.release(wd, ("task", key))
        self._wds_of[key] = kept
        if len(kept) < len(needed):
            round_.loose.add(task)  # a watch it rests on could not be had: stat-scanned each time
        else:
            round_.tasks.add(task)
        if judged is not None:
            self._seen[key] = judged
            if judged.claim is not None:
                round_.open[task] = judged

"""Writer claims kept as rows, proven current by a stat of each round rather than of each task.

``ClaimIndex`` stats, each scan, the file every task's judgement rests on: one stat per task of
every active change. A long-lived server keeps instead one row per round: the round directory's
stamp (device, inode, ctime_ns) when it was listed, and the names of its settled tasks, those that
claim nothing (a REPORT or RELEASE ended their claim, or a read-only TASK names no artifact or
resource). The rows are saved in this user's cache (``files.cache_file``: signed, outside the
tree), so a restarted server starts from them; they are never the truth, only what may be skipped.

What a scan looks at, and why that judges as a full scan does:

- Each round directory is stat'ed (no open). Making, removing or renaming a task directory in it,
  or a chmod or chown of it, changes its ctime (the mtime would do for the first, but ``utime`` can
  set it back; nothing but the clock sets a ctime): a round whose stamp differs is listed again, and
  every task in it judged from its files by ``claims.judge`` (as a full scan would: a hundred tasks
  or so). A stamp is kept only once the coarse clock that stamps it has moved on (and ``SETTLED_NS``
  more): an entry made in the same clock tick as the listing would leave the ctime as it was, so a
  round changed that recently is listed again.
- Every live task (one holding a claim, a directory with no TASK yet, a symlink, a stray file) is
  looked at each scan as ``ClaimIndex`` does (its directory listed, its TASK re-stamped): a REPORT
  or RELEASE arriving ends its claim at once, a TASK rewritten is judged again. Live tasks are the
  writers and readers at work now: few, whatever the history.
- A settled task is not looked at again while its round's stamp holds. A file removed, rewritten or
  made unreadable by hand inside a settled task's directory changes no round's ctime: that task
  stays settled here until anything is made or removed in its round, or the rows are dropped
  (``forget``). That is the price of not reading every task's files per dispatch, and why this
  index is only a server's: a fresh process (the CLI, a hook) scans every task (``ClaimIndex``).
- Anything that cannot be proven (a round that cannot be stat'ed, a change that cannot be read, a
  cache that is missing, unsigned or of another tree) is judged from the files; never the reverse.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path

from handoff_core.contract.anchor import TaskAnchor
from handoff_core.errors import ChangeNotFound, HandoffError
from handoff_core.files.cache_file import load_cache, save_cache
from handoff_core.files.change_dir import locate_change
from handoff_core.files.executor_home import cache_root
from handoff_core.files.paths import is_symlink, open_dir
from handoff_core.layout import SESSIONS
from handoff_core.services.rules.ownership import Claim
from handoff_core.services.tree.claims import ClaimIndex, change_hold, unreadable_because

__all__ = ["COARSE_CLOCK", "SETTLED_NS", "ClaimRows", "rows_path"]

SETTLED_NS = 1_000_000_000  # a margin past the clock tick (1 s): a round changed this recently is listed again
COARSE_CLOCK = 5  # Linux's CLOCK_REALTIME_COARSE, which stamps a file's times (not named by ``time``)
SAVE_AFTER = 3  # rounds new to the rows since the last save (a restart would judge them all again)
_FOLDER = "claim-rows"
_VERSION = 3  # 3: a round's settled names as one string
_ROUNDS_PER_PART = 64
_LIMIT = 64 << 20

Stamp = tuple[int, int, int]  # device, inode, ctime_ns of a round directory


@dataclass
class _Round:
    stamp: Stamp | None  # None: not yet settled, listed again at the next scan
    # Tasks that claim nothing (closed, or read-only), kept only to be saved: their names joined by NUL,
    # which no file name holds; one string per round, not a set of strings (a server holds one per task).
    settled: str = ""
    live: set[str] = field(default_factory=set)  # every other entry: looked at each scan


_SEP = "\0"


def _names(joined: str) -> list[str]:
    return joined.split(_SEP) if joined else []


def _json_parts(head: dict[str, object], rows: list[list[object]]) -> Iterator[bytes]:
    """``head`` with ``"rounds": rows`` as one JSON object, made a few rounds at a time: whole, the
    text of a settled name per task would be made twice (a string, then its bytes) when a server saves."""
    yield json.dumps(head, separators=(",", ":"))[:-1].encode() + b',"rounds":['
    for start in range(0, len(rows), _ROUNDS_PER_PART):
        comma = b"," if start else b""
        yield (
            comma
            + ",".join(
                json.dumps(row, separators=(",", ":")) for row in rows[start : start + _ROUNDS_PER_PART]
            ).encode()
        )
    yield b"]}"


def rows_path(state_root: Path) -> Path:
    """Where a state root's rows are kept: this user's cache, one file per tree."""
    digest = hashlib.sha256(os.fsencode(os.path.realpath(state_root))).hexdigest()[:32]
    return Path(cache_root(), _FOLDER, digest)


def _basis(anchor: TaskAnchor | None) -> str:
    """The Lead's anchor a judgement rests on, as the rows record it (a digest: never the key)."""
    if anchor is None:
        return ""
    digest = hashlib.sha256(b"claim-rows\0" + anchor.key).hexdigest()[:32]
    return f"{digest}:{'governed' if anchor.governed else 'open'}"


def _stamp(info: os.stat_result) -> Stamp:
    return (info.st_dev, info.st_ino, info.st_ctime_ns)


class ClaimRows(ClaimIndex):
    """``ClaimIndex``'s answer from rows per round (see the module); ``judged`` counts files read."""

    def __init__(self, cache: Path | None = None, settle_ns: int = SETTLED_NS) -> None:
        super().__init__()
        self.settle_ns = settle_ns
        self._lock = threading.RLock()
        self._rounds: dict[tuple[str, str], _Round] = {}
        self._cache = cache
        self._loaded_for: str | None = None
        self._basis_of_rows = ""  # what the rows' judgements rest on (``_basis``)
        self.judged = 0
        self._unsaved = 0

    def forget(self) -> None:
        """Drop every row: the next scan judges every task from its files."""
        with self._lock:
            self._rounds.clear()
            self._seen.clear()

    def claims(self, root: Path, changes: list[str], anchor: TaskAnchor | None = None) -> list[Claim]:
        with self._lock:
            self._load(root)
            self.anchored(anchor)
            if (basis := _basis(anchor)) != self._basis_of_rows:
                self._rounds.clear()  # a settled TASK was judged by the anchor: all are judged again
                self._basis_of_rows = basis
            now, found, active = time.time(), [], set(changes)
            for gone in {key for key in self._rounds if key[0] not in active}:
                del self._rounds[gone]
            for change in changes:
                try:
                    found += self._change_rows(root, change, now)
                except ChangeNotFound:
                    self._drop_change(change)
                except (HandoffError, OSError) as exc:
                    self._drop_change(change)
                    why = exc.message if isinstance(exc, HandoffError) else exc.strerror or str(exc)
                    found.append(change_hold(change, unreadable_because(change, why)))
            if self._unsaved >= SAVE_AFTER:
                self._save(root)
            return found

    def _drop_change(self, change: str) -> None:
        for key in [key for key in self._rounds if key[0] == change]:
            del self._rounds[key]

    def _change_rows(self, root: Path, change: str, now: float) -> list[Claim]:
        with locate_change(root, change) as (facts, change_fd), ExitStack() as stack:
            if facts.location != "active":
                self._drop_change(change)
                return []
            if facts.unreadable:
                self._drop_change(change)
                return [change_hold(change, unreadable_because(change, facts.unreadable))]
            try:
                sessions_fd = open_dir(change_fd, SESSIONS)
            except FileNotFoundError:
                self._drop_change(change)
                return []
            stack.callback(os.close, sessions_fd)
            sessions = os.listdir(sessions_fd)
            for gone in {key for key in self._rounds if key[0] == change} - {(change, s) for s in sessions}:
                del self._rounds[gone]
            found: list[Claim] = []
            for session in sessions:
                found += self._session_rows(sessions_fd, change, session, now)
            return found

    def _session_rows(self, sessions_fd: int, change: str, session: str, now: float) -> list[Claim]:
        key = (change, session)
        row = self._rounds.get(key)
        if row is not None and row.stamp is not None and not row.live:
            try:
                info = os.stat(session, dir_fd=sessions_fd, follow_symlinks=False)
            except FileNotFoundError:
                del self._rounds[key]
                return []
            if stat.S_ISDIR(info.st_mode) and _stamp(info) == row.stamp:
                return []  # no task in it claims anything, and none was made or removed since
        try:
            round_fd = open_dir(sessions_fd, session)
        except FileNotFoundError:
            self._rounds.pop(key, None)
            return []
        except (HandoffError, NotADirectoryError):
            self._rounds.pop(key, None)
            if is_symlink(sessions_fd, session):
                raise  # a round elsewhere may hold writers: the change holds the workspace
            return []  # a stray file is no round
        try:
            return self._round_rows(round_fd, key, row, now)
        finally:
            os.close(round_fd)

    def _round_rows(self, round_fd: int, key: tuple[str, str], row: _Round | None, now: float) -> list[Claim]:
        # The clock the kernel stamps a ctime with, read before the stat: a ctime older than it ends a
        # tick that is over, so any change made after the stat is stamped later and cannot hide in it.
        now_ns = time.clock_gettime_ns(COARSE_CLOCK)
        info = os.fstat(round_fd)  # before the listing: an entry made after it changes the ctime seen next
        stamp = _stamp(info) if info.st_ctime_ns < now_ns - self.settle_ns else None
        if row is None or row.stamp is None or row.stamp != _stamp(info):
            # Every task of a changed round is judged again, the settled ones too: a file removed by
            # hand is seen at the latest when anything is made or removed in its round.
            if row is None:
                self._unsaved += 1  # a round the rows did not hold: a restart would judge it all again
            row = self._rounds[key] = _Round(stamp, "", set(os.listdir(round_fd)))
        found: list[Claim] = []
        settled: list[str] = []
        for task in sorted(row.live):
            task_key = (*key, task)
            before = self._seen.get(task_key)
            seen = self._read(round_fd, task_key, before)
            if seen is not before:
                self.judged += 1
            if seen is not None and seen.claim is None:
                row.live.discard(task)
                settled.append(task)
                self._seen.pop(task_key, None)  # its row is the name alone
            elif seen is not None and seen.claim is not None:
                found.append(replace(seen.claim, age_seconds=max(0.0, now - seen.since)))
        row.live = set(row.live)  # a set keeps the table it grew to: emptied, it would hold 8 KB per round
        if settled:
            row.settled = _SEP.join([*_names(row.settled), *settled])
        return found

    def _load(self, root: Path) -> None:
        """The rows a server saved for this tree, once per root; nothing when they cannot be trusted."""
        real = os.path.realpath(root)
        if self._loaded_for == real:
            return
        self._loaded_for, self._rounds = real, {}
        data = load_cache(self._path(root), _LIMIT)
        try:
            saved = json.loads(data) if data is not None else None
            if not isinstance(saved, dict) or saved.get("version") != _VERSION or saved.get("root") != real:
                return
            self._basis_of_rows = str(saved["basis"])
            for change, session, device, inode, ctime_ns, settled, live in saved["rounds"]:
                stamp = (int(device), int(inode), int(ctime_ns))
                if not isinstance(settled, str):
                    raise TypeError("a round's settled tasks are one string")
                self._rounds[(str(change), str(session))] = _Round(stamp, settled, {*map(str, live)})
        except (ValueError, TypeError, KeyError):
            self._rounds = {}  # signed by this user, yet not rows of this version: judged afresh

    def save(self, root: Path) -> None:
        """Keep the rows in the cache for the next server; nothing when it cannot be written."""
        with self._lock:
            self._save(root)

    def _save(self, root: Path) -> None:
        rows = [
            [*key, *row.stamp, row.settled, sorted(row.live)]  # the live ones are looked at again
            for key, row in self._rounds.items()
            if row.stamp is not None
        ]
        head = {"version": _VERSION, "root": os.path.realpath(root), "basis": self._basis_of_rows}
        if save_cache(self._path(root), _json_parts(head, rows)):
            self._unsaved = 0

    def _path(self, root: Path) -> Path:
        return self._cache if self._cache is not None else rows_path(root)

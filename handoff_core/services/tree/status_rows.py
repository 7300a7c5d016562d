"""The held verdicts of a server kept as rows in this user's cache, so that a restarted server's
first status is a warm one: each task's judged status on the stamps it was judged on.

A row is what ``verdicts.Held`` is: the change's facts, the round's count of entries with the
task's number, the packed stamps and entry names of the probe, and the status judged. The file
is one per tree (keyed by the state root's real path) in ``cache_root()/status-rows``, signed by
``files.cache_file`` and written in frames of rows, made one at a time. It is never the truth: a
loaded row is used only where the
walk's own probe of the task (a stat per file) equals the row's, exactly as a verdict held in
memory is; and rows judged under another anchor (or none), of another tree or another version
are not loaded at all. What cannot be proven is judged from the files.

What many tasks say alike is kept once: the file holds a table each of the changes' facts, of the
entry-name sets and of the statuses without their task and times, and a row per task names its
entries in them. A restarted server reads it before its first answer: one row is then a few small
values to read and three tuples to make, not a status's forty values each decoded and rebuilt.

``marshal`` reads the rows: they are plain values (tuples, strings, numbers, bytes), signed by
this user's key, and rebuilt into the named tuples they came from. A value of the wrong type
never equals a walk's probe or place, so it is never used.
"""

from __future__ import annotations

import hashlib
import itertools
import marshal
import os
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from handoff_core.contract.anchor import TaskAnchor
from handoff_core.contract.change import ChangeFacts
from handoff_core.contract.ids import Ref
from handoff_core.contract.scope import Scope, SharedPath
from handoff_core.files.cache_file import load_cache, save_cache
from handoff_core.files.executor_home import cache_root
from handoff_core.services.tree.status import TaskStatus
from handoff_core.services.tree.verdicts import Held, Shared, Verdicts

__all__ = ["ROWS_PER_FRAME", "Row", "StatusRows", "load_rows", "read_rows", "save_rows"]

_FOLDER = "status-rows"
_VERSION = 3  # 3: what tasks say alike kept once, in frames
_FRAME_SIZE = 8  # bytes of a frame's byte count
ROWS_PER_FRAME = 1000
_LIMIT = 256 << 20

Row = tuple[ChangeFacts, int, bytes, tuple[str, ...], TaskStatus]  # ``verdicts.Held``'s fields
# A status's own times, kept per row beside its ref (the rest of it is kept once per kind of status).
_TIMES = ("dispatched_at", "released_at", "closed_at")  # one after the other in ``TaskStatus``
_AT = TaskStatus._fields.index(_TIMES[0])
_AFTER = _AT + len(_TIMES)


def _path(state_root: Path) -> Path:
    digest = hashlib.sha256(os.fsencode(os.path.realpath(state_root))).hexdigest()[:32]
    return Path(cache_root(), _FOLDER, digest)


def basis(anchor: TaskAnchor | None) -> str:
    """The Lead's anchor the verdicts were judged by, as the rows record it (a digest: never the key)."""
    if anchor is None:
        return ""
    digest = hashlib.sha256(b"status-rows\0" + anchor.key).hexdigest()[:32]
    return f"{digest}:{'governed' if anchor.governed else 'open'}"


def _plain(status: TaskStatus) -> tuple[Any, ...]:
    """A status without its ref and times, as plain tuples (``marshal`` writes no named tuple)."""
    scope: tuple[Any, ...] | None = None
    if status.scope is not None:
        scope = (*status.scope[:3], tuple(tuple(shared) for shared in status.scope.shared), *status.scope[4:])
    return (*status[1:4], scope, *status[5:_AT], *status[_AFTER:])


def _template(plain: tuple[Any, ...], shared: Shared) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """A kept status without its ref and times, as the fields before and after its times."""
    scope = plain[3]
    if scope is not None:
        scope = shared.scope(Scope._make(scope)._replace(shared=tuple(SharedPath(*path) for path in scope[3])))
    fields = (*plain[:3], scope, *plain[4:])
    if len(fields) != len(TaskStatus._fields) - 1 - len(_TIMES):
        raise ValueError("not a status row")
    return fields[: _AT - 1], fields[_AT - 1 :]


def _index(table: dict[Any, int], value: Any) -> int:
    return table.setdefault(value, len(table))


def _framed(value: Any) -> bytes:
    data = marshal.dumps(value)
    return len(data).to_bytes(_FRAME_SIZE, "little") + data


def _frames(state_root: Path, anchor_basis: str, rows: Iterable[Row]) -> Iterator[bytes]:
    """The rows as frames made one at a time (its byte count, then one ``marshal`` value): the header,
    ``ROWS_PER_FRAME`` rows each, and last the tables they name. Made whole, the rows and their bytes
    would cost a server more than all its verdicts held, at the moment it saves them."""
    yield _framed((_VERSION, os.path.realpath(state_root), anchor_basis))
    facts: dict[Any, int] = {}
    names: dict[Any, int] = {}
    statuses: dict[Any, int] = {}
    rows = iter(rows)
    while part := list(itertools.islice(rows, ROWS_PER_FRAME)):
        kept = [
            (
                _index(facts, tuple(change)),
                *status.ref[1:],
                same,
                stamps,
                _index(names, entries),
                _index(statuses, _plain(status)),
                *status[_AT:_AFTER],
            )
            for change, same, stamps, entries, status in part
            if status.ref.change == change.change
        ]
        yield _framed(kept)
    yield _framed((list(facts), list(names), list(statuses)))


def _unframed(data: bytes) -> list[Any]:
    """The values of every frame (``_frames``), in order."""
    view, at, values = memoryview(data), 0, []
    while at < len(view):
        size = int.from_bytes(view[at : at + _FRAME_SIZE], "little")
        at += _FRAME_SIZE
        if size > len(view) - at:
            raise EOFError("a frame runs past the end of the rows")
        values.append(marshal.loads(view[at : at + size]))  # noqa: S302  # signed by this user's key (``cache_file``)
        at += size
    if len(values) < 2:  # noqa: PLR2004  # a header and the tables, at the least
        raise EOFError("no rows")
    return values


def save_rows(state_root: Path, anchor_basis: str, rows: Iterable[Row]) -> bool:
    """Keep the rows for the next server on this tree; whether they were written."""
    return save_cache(_path(state_root), _frames(state_root, anchor_basis, rows))


def read_rows(state_root: Path, shared: Shared) -> tuple[str, list[Held]]:
    """The rows a server before this one kept for this tree, and the anchor they were judged by
    (``basis``); none when they cannot be trusted (missing, unsigned, of another tree or version).
    ``shared``: the table of the verdicts they join, so that what they say alike is held once."""
    data = load_cache(_path(state_root), _LIMIT)
    if data is None:
        return "", []
    try:
        (version, root, saved_basis), *kept_frames, (facts_table, names_table, status_table) = _unframed(data)
        if (version, root) != (_VERSION, os.path.realpath(state_root)) or not isinstance(saved_basis, str):
            return "", []
        facts = [ChangeFacts._make(change) for change in facts_table]
        names = [shared.names(tuple(entries)) for entries in names_table]
        statuses = [_template(plain, shared) for plain in status_table]
        rows = [
            _held(facts[f], session, task, same, stamps, names[n], statuses[s], times)
            for kept in kept_frames
            for f, session, task, same, stamps, n, s, *times in kept
        ]
    except (ValueError, TypeError, EOFError, IndexError):
        return "", []
    return saved_basis, rows


def load_rows(state_root: Path, anchor_basis: str, shared: Shared | None = None) -> list[Held]:
    """``read_rows``, when they were judged under this anchor; else none."""
    saved_basis, rows = read_rows(state_root, shared or Shared())
    return rows if saved_basis == anchor_basis else []


def _held(
    facts: ChangeFacts,
    session: str,
    task: str,
    same: int,
    stamps: bytes,
    names: tuple[str, ...],
    status: tuple[tuple[Any, ...], tuple[Any, ...]],
    times: list[Any],
) -> Held:
    if len(times) != len(_TIMES):
        raise ValueError("not a status row")
    ref = Ref._make((facts.change, session, task))
    return Held(facts, same, stamps, names, TaskStatus._make((ref, *status[0], *times, *status[1])))


class StatusRows:
    """A server's verdicts kept for the next server on its tree: read ahead of its first walk (or by
    it), taken by that walk when judged under its anchor; saved after a full walk that held new ones."""

    def __init__(self, state_root: Path) -> None:
        self.state_root = state_root
        self._loaded = False
        self._read: tuple[str, list[Held]] | None = None  # read ahead, not yet taken
        self._lock = threading.Lock()

    def read(self, shared: Shared) -> None:
        """Read the rows now, ahead of the first walk (which waits for this, then takes them)."""
        with self._lock:
            if not self._loaded and self._read is None:
                self._read = read_rows(self.state_root, shared)

    def load(self, verdicts: Verdicts, anchor: TaskAnchor | None) -> None:
        """Hold the rows a server before this one kept (judged under ``anchor``), once."""
        if self._loaded:
            return
        with self._lock:
            if not self._loaded:
                saved_basis, kept = self._read or read_rows(self.state_root, verdicts.shared)
                self._read = None
                governed = anchor is not None and anchor.governed
                verdicts.take_rows(kept if saved_basis == basis(anchor) else [], governed)
                self._loaded = True

    def save(self, verdicts: Verdicts, anchor: TaskAnchor | None) -> None:
        """Keep the verdicts held as rows when some were held since the last time."""
        if not verdicts.added:
            return
        with self._lock:
            verdicts.added = 0
            save_rows(self.state_root, basis(anchor), verdicts.rows())

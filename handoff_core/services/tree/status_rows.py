"""The held verdicts of a server kept as rows in this user's cache, so that a restarted server's
first status is a warm one: each task's judged status on the stamps it was judged on.

A row is what ``verdicts.Held`` is: the change's facts, the round's count of entries with the
task's number, the packed stamps and entry names of the probe, and the status judged. The file
is one per tree (keyed by the state root's real path) in ``cache_root()/status-rows``, signed by
``files.cache_file`` and written in frames of rows, made one at a time. It is never the truth: a
loaded row is used only where the walk's own probe of the task (a stat per file) equals the
row's, exactly as a verdict held in memory is; and rows judged under another anchor (or none),
of another tree or another version are not loaded at all. What cannot be proven is judged from the files.

``marshal`` reads the rows: they are plain values (tuples, strings, numbers, bytes), signed by
this user's key, and every row is rebuilt field by field into the named tuples it came from.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from handoff_core.contract.anchor import TaskAnchor
from handoff_core.contract.change import ChangeFacts
from handoff_core.contract.ids import Ref
from handoff_core.contract.scope import Scope, SharedPath
from handoff_core.files.cache_file import load_cache, save_cache
from handoff_core.files.executor_home import cache_root
from handoff_core.services.tree.status import TaskStatus
from handoff_core.services.tree.verdicts import Held, Verdicts

__all__ = ["ROWS_PER_FRAME", "Row", "StatusRows", "load_rows", "save_rows"]

_FOLDER = "status-rows"
_VERSION = 2  # 2: in frames
_FRAME_SIZE = 8  # bytes of a frame's byte count
ROWS_PER_FRAME = 1000
_LIMIT = 256 << 20

Row = tuple[ChangeFacts, int, bytes, tuple[str, ...], TaskStatus]  # ``verdicts.Held``'s fields


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
    """A status as plain tuples (``marshal`` writes no named tuple)."""
    scope: tuple[Any, ...] | None = None
    if status.scope is not None:
        scope = (*status.scope[:3], tuple(tuple(shared) for shared in status.scope.shared), *status.scope[4:])
    return (tuple(status.ref), *status[1:4], scope, *status[5:])


def _status(plain: tuple[Any, ...]) -> TaskStatus:
    ref, scope = Ref(*plain[0]), plain[4]
    if scope is not None:
        scope = Scope._make(scope)._replace(shared=tuple(SharedPath(*shared) for shared in scope[3]))
    status = TaskStatus._make((ref, *plain[1:4], scope, *plain[5:]))
    if len(status) != len(TaskStatus._fields):
        raise ValueError("not a status row")
    return status


def _framed(value: Any) -> bytes:
    data = marshal.dumps(value)
    return len(data).to_bytes(_FRAME_SIZE, "little") + data


def _frames(state_root: Path, anchor_basis: str, rows: Sequence[Row]) -> Iterator[bytes]:
    """The rows as frames made one at a time (its byte count, then one ``marshal`` value): the header,
    then ``ROWS_PER_FRAME`` rows each. Made whole, the rows' plain copies and their bytes would cost
    a server more than all its verdicts held, at the moment it saves them."""
    yield _framed((_VERSION, os.path.realpath(state_root), anchor_basis))
    for start in range(0, len(rows), ROWS_PER_FRAME):
        part = rows[start : start + ROWS_PER_FRAME]
        yield _framed(
            [(tuple(facts), same, stamps, names, _plain(status)) for facts, same, stamps, names, status in part]
        )


def _unframed(data: bytes) -> tuple[Any, ...]:
    """The header's values and the rows of every frame after it (``_frames``)."""
    view, at, values = memoryview(data), 0, []
    while at < len(view):
        size = int.from_bytes(view[at : at + _FRAME_SIZE], "little")
        at += _FRAME_SIZE
        if size > len(view) - at:
            raise EOFError("a frame runs past the end of the rows")
        values.append(marshal.loads(view[at : at + size]))  # noqa: S302  # signed by this user's key (``cache_file``)
        at += size
    if not values:
        raise EOFError("no rows")
    return (*values[0], [row for frame in values[1:] for row in frame])


def save_rows(state_root: Path, anchor_basis: str, rows: Sequence[Row]) -> bool:
    """Keep the rows for the next server on this tree; whether they were written."""
    return save_cache(_path(state_root), _frames(state_root, anchor_basis, rows))


def load_rows(state_root: Path, anchor_basis: str) -> list[Row]:
    """The rows a server before this one kept for this tree under this anchor; none when they cannot
    be trusted (missing, unsigned, of another tree, version or anchor)."""
    data = load_cache(_path(state_root), _LIMIT)
    if data is None:
        return []
    try:
        version, root, saved_basis, plain = _unframed(data)
        if (version, root, saved_basis) != (_VERSION, os.path.realpath(state_root), anchor_basis):
            return []
        return [
            (ChangeFacts._make(facts), int(same), bytes(stamps), tuple(names), _status(status))
            for facts, same, stamps, names, status in plain
        ]
    except (ValueError, TypeError, EOFError):
        return []


class StatusRows:
    """A server's verdicts kept for the next server on its tree: loaded before its first walk, saved
    after a full walk that held new ones."""

    def __init__(self, state_root: Path) -> None:
        self.state_root = state_root
        self._loaded = False
        self._lock = threading.Lock()

    def load(self, verdicts: Verdicts, anchor: TaskAnchor | None) -> None:
        """Hold the rows a server before this one kept (judged under ``anchor``), once."""
        if self._loaded:
            return
        with self._lock:
            if not self._loaded:
                kept = load_rows(self.state_root, basis(anchor))
                verdicts.take_rows([Held(*row) for row in kept], anchor is not None and anchor.governed)
                self._loaded = True

    def save(self, verdicts: Verdicts, anchor: TaskAnchor | None) -> None:
        """Keep the verdicts held as rows when some were held since the last time."""
        if not verdicts.added:
            return
        with self._lock:
            verdicts.added = 0
            save_rows(self.state_root, basis(anchor), verdicts.rows())

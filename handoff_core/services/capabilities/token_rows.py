"""A token index's rows kept in this user's cache, so that a restarted team server reads no TASK.md
it read before: its first executor is answered after a stat of each task, not a parse of each TASK.

A row is one task's TASK.md as it was read: the file's stamp (device, inode, size, mtime_ns,
ctime_ns) and the token check it records, or none. It is used only where the walk's own stat of
that TASK.md equals the row. A TASK is written once, and a write to its file moves the ctime, which
nothing but the clock sets; a stamp is kept only for a file whose ctime was more than ``SETTLED_NS``
behind the coarse clock that stamps it, read before the stat, so a rewrite in the same clock tick
cannot leave the stamp as it was. The one write no stat shows, through a shared mapping to a page it
already dirtied, needs the file open for writing: a stamp is kept only for a file read under a read
lease (``files.leases``), which the kernel grants only while no process holds it so.

The file is one per tree (keyed by the state root's real path) in ``cache_root()/token-rows``,
signed by ``files.cache_file``; it is never the truth, and what it cannot prove is read from the
tree.

``marshal`` reads the rows: plain values, signed by this user's key, read as one dictionary. A row
is checked where a task is looked up in it: one of the wrong shape or type is never used, and the
whole file is not when it names another tree or version.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import stat
import time
from pathlib import Path

from handoff_core.files.cache_file import load_cache, save_cache
from handoff_core.files.executor_home import cache_root
from handoff_core.files.leases import unwritten
from handoff_core.services.tree.claim_rows import COARSE_CLOCK, SETTLED_NS

__all__ = [
    "Key",
    "Row",
    "Stamp",
    "load_rows",
    "proven",
    "read_stamp",
    "rows_path",
    "save_rows",
    "settled_stamp",
    "stamp",
]

_FOLDER = "token-rows"
_VERSION = 1
_LIMIT = 64 << 20

Key = tuple[str, str, str]  # change, round, task
Stamp = tuple[int, int, int, int, int]  # device, inode, size, mtime_ns, ctime_ns of a TASK.md
Row = tuple[Stamp | None, str | None]  # the stamp it was read at (None: too recent to keep), its token check
_FIELDS = 2  # a saved row: the stamp, the check


def stamp(info: os.stat_result) -> Stamp:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def settled_stamp(info: os.stat_result, now_ns: int, settle_ns: int = SETTLED_NS) -> Stamp | None:
    """The file's stamp, when its ctime is far enough behind ``now_ns``, the coarse clock read before
    ``info`` was taken, to prove it."""
    return stamp(info) if info.st_ctime_ns < now_ns - settle_ns else None


def read_stamp(fd: int, settle_ns: int = SETTLED_NS) -> Stamp | None:
    """The stamp of the file ``fd`` is about to read, when it may be kept: its ctime settled by the clock
    read first, and a read lease granted on ``fd`` (held until it is closed, after the read)."""
    now_ns = time.clock_gettime_ns(COARSE_CLOCK)
    info = os.fstat(fd)
    return settled_stamp(info, now_ns, settle_ns) if unwritten(fd) else None


def rows_path(state_root: Path) -> Path:
    digest = hashlib.sha256(os.fsencode(os.path.realpath(state_root))).hexdigest()[:32]
    return Path(cache_root(), _FOLDER, digest)


def save_rows(state_root: Path, rows: dict[Key, Row]) -> bool:
    """Replace the tree's rows with ``rows``' settled ones; False when the cache cannot be written."""
    settled = {key: row for key, row in rows.items() if row[0] is not None}
    return save_cache(rows_path(state_root), marshal.dumps((_VERSION, os.path.realpath(state_root), settled)))


def load_rows(state_root: Path) -> dict[Key, object]:
    """The tree's rows as last saved; empty when there are none this user signed for this tree.

    A row is checked where it is used (``proven``): most are never looked at twice."""
    data = load_cache(rows_path(state_root), _LIMIT)
    if data is None:
        return {}
    try:
        version, root, rows = marshal.loads(data)  # noqa: S302  # signed by this user's key (``cache_file``)
    except (EOFError, ValueError, TypeError):
        return {}
    if version != _VERSION or root != os.path.realpath(state_root) or not isinstance(rows, dict):
        return {}
    return rows


def proven(row: object, info: os.stat_result) -> Row | None:
    """``row`` when it is a row of the file ``info`` describes: a regular file of the same stamp."""
    if not (isinstance(row, tuple) and len(row) == _FIELDS and stat.S_ISREG(info.st_mode)):
        return None
    found, check = row
    return (found, check) if found == stamp(info) and (check is None or isinstance(check, str)) else None

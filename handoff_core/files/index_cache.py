"""A work tree's private index kept between reads of it, so that git hashes only the tracked files
whose stat data changed since it last hashed them, not every tracked file on every read.

The index a read builds (from ``HEAD``, never the work tree's own: see ``work_tree``) records each
file's stat data once git has hashed the file and found its blob. Kept in this user's cache folder
(outside every work tree), it is trusted again only when it verifies: its bytes, the work tree, the
``HEAD`` it was read from and the index file's modification time are under an HMAC whose key this
process drew when it started and never wrote anywhere. An index written by any other process (an
executor, an earlier server) or edited since fails the check and is built again from ``HEAD``; a
file changed since it was hashed has new stat data (its ctime, which no one but the kernel sets)
and is hashed again. The index file's modification time is restored with it: git's check for a
file changed in the same tick as its index was written ("racily clean") reads that time.

That check reads the modification time only, which anyone may set back, and git compares whole
seconds: a file whose ctime lies in the second the read began could be rewritten later in that
second, its size and modification time put back, and match (``CLOCK_LAG`` widens that second). An
index holding such an entry is not kept (``keep``, ``_settled``): the next read hashes every file.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import struct
from pathlib import Path

from handoff_core.files.executor_home import cache_root
from handoff_core.files.git_config import small_file
from handoff_core.files.publishing import replace_whole

__all__ = ["CLOCK_LAG", "MAX_INDEX", "held_at", "keep", "restore"]

MAX_INDEX = 64 * 1024 * 1024  # an index past this is not kept: the next read hashes every file
_KEY = secrets.token_bytes(32)  # this process's alone: nothing written elsewhere can pass the check
_HEX = frozenset(b"0123456789abcdef")
_HEADER = 12  # "DIRC", the version, the number of entries
_EXTENDED = 0x4000  # an entry's flag: two more bytes of flags follow (version 3)
_SHA1_HEX, _SHA256_HEX = 40, 64
_RECORD = 256  # the record line: HEAD, the modification time, the HMAC
# The kernel stamps a file's times from a clock that lags time.time() by up to a tick: a write just
# after a read began may bear the second before it.
CLOCK_LAG = 0.1


def held_at(tree: Path) -> str:
    """Where the index kept for ``tree`` lives: one file, its record line then the index's bytes."""
    folder = os.path.join(cache_root(), "index")
    return os.path.join(folder, hashlib.sha256(os.fsencode(os.path.realpath(tree))).hexdigest()[:32])


def _mac(tree: Path, head: str, mtime_ns: int, data: bytes) -> str:
    said = b"\0".join((os.fsencode(os.path.realpath(tree)), head.encode(), str(mtime_ns).encode(), data))
    return hmac.new(_KEY, said, hashlib.sha256).hexdigest()


def restore(tree: Path, index: str) -> str | None:
    """The index kept for ``tree`` written at ``index`` (a path no index is at yet), its modification
    time as it was; the ``HEAD`` it was read from, or None (nothing written) when none verifies."""
    kept = small_file(os.fsencode(held_at(tree)), limit=MAX_INDEX + _RECORD)
    record, _, data = (kept or b"").partition(b"\n")
    parts = record.split(b" ")
    if len(parts) != 3 or not parts[0] or not set(parts[0]) <= _HEX or not parts[1].isdigit():  # noqa: PLR2004
        return None
    head, mtime_ns = parts[0].decode(), int(parts[1])
    if not hmac.compare_digest(parts[2], _mac(tree, head, mtime_ns, data).encode()):
        return None
    fd = os.open(index, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        with open(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.utime(out.fileno(), ns=(mtime_ns, mtime_ns))
    except OSError:
        os.unlink(index)  # no index at all: the caller reads one from HEAD
        return None
    return head


def keep(tree: Path, head: str, index: str, began: float) -> None:
    """Keep ``index`` (read from ``head``, refreshed against ``tree`` by a read that ``began`` then, in
    ``time.time()`` seconds) for the next read of ``tree``; a cache that cannot be written, or an
    index not ``_settled``, costs the next read its hashing, nothing else."""
    data = small_file(os.fsencode(index), limit=MAX_INDEX)
    digits = _SHA256_HEX if len(head) == _SHA256_HEX else _SHA1_HEX
    if data is None or not _settled(data, int(began - CLOCK_LAG), digits):
        return
    mtime_ns = os.stat(index).st_mtime_ns
    name = held_at(tree)
    record = f"{head} {mtime_ns} {_mac(tree, head, mtime_ns, data)}\n".encode()
    try:
        os.makedirs(os.path.dirname(name), mode=0o700, exist_ok=True)
        dir_fd = os.open(os.path.dirname(name), os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return
    try:
        replace_whole(dir_fd, os.path.basename(name), record, data, mode=0o600, durable=False)
    except OSError:
        return
    finally:
        os.close(dir_fd)


def _settled(data: bytes, second: int, hex_digits: int) -> bool:
    """Whether every entry of the index ``data`` (version 2 or 3) records a ctime before ``second``;
    False for anything else (another version, an odd entry)."""
    if len(data) < _HEADER or data[:4] != b"DIRC":
        return False
    version, count = struct.unpack(">II", data[4:_HEADER])
    at, fixed = _HEADER, 40 + hex_digits // 2 + 2  # ten 32-bit stat fields, the object id, the flags
    for _ in range(count):
        if version not in (2, 3) or at + fixed > len(data):
            return False
        ctime = struct.unpack(">I", data[at : at + 4])[0]
        flags = struct.unpack(">H", data[at + fixed - 2 : at + fixed])[0]
        head = fixed + (2 if version == 3 and flags & _EXTENDED else 0)  # noqa: PLR2004
        name = data.find(b"\0", at + head)
        if ctime >= second or name < 0:
            return False
        at += (name - at + 8) & ~7  # the entry and its name padded with 1 to 8 NULs to a multiple of 8
    return True

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
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import tempfile
from pathlib import Path

from handoff_core.files.executor_home import cache_root
from handoff_core.files.git_config import small_file

__all__ = ["MAX_INDEX", "keep", "restore"]

MAX_INDEX = 64 * 1024 * 1024  # an index past this is not kept: the next read hashes every file
_KEY = secrets.token_bytes(32)  # this process's alone: nothing written elsewhere can pass the check
_HEX = frozenset(b"0123456789abcdef")


def _named(tree: Path) -> str:
    folder = os.path.join(cache_root(), "index")
    return os.path.join(folder, hashlib.sha256(os.fsencode(os.path.realpath(tree))).hexdigest()[:32])


def _mac(tree: Path, head: str, mtime_ns: int, data: bytes) -> str:
    said = b"\0".join((os.fsencode(os.path.realpath(tree)), head.encode(), str(mtime_ns).encode(), data))
    return hmac.new(_KEY, said, hashlib.sha256).hexdigest()


def restore(tree: Path, index: str) -> str | None:
    """The index kept for ``tree`` written at ``index`` (a path no index is at yet), its modification
    time as it was; the ``HEAD`` it was read from, or None (nothing written) when none verifies."""
    name = _named(tree)
    record = small_file(os.fsencode(name + ".mac"))
    parts = (record or b"").split(b"\n")
    if len(parts) != 3 or not set(parts[0]) <= _HEX or not parts[1].isdigit():  # noqa: PLR2004
        return None
    data = small_file(os.fsencode(name + ".idx"), limit=MAX_INDEX)
    head, mtime_ns = parts[0].decode(), int(parts[1])
    if not head or data is None or not hmac.compare_digest(parts[2], _mac(tree, head, mtime_ns, data).encode()):
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


def keep(tree: Path, head: str, index: str) -> None:
    """Keep ``index`` (read from ``head``, refreshed against ``tree``) for the next read of ``tree``;
    a cache that cannot be written costs the next read its hashing, nothing else."""
    data = small_file(os.fsencode(index), limit=MAX_INDEX)
    if data is None:
        return
    mtime_ns = os.stat(index).st_mtime_ns
    name = _named(tree)
    try:
        os.makedirs(os.path.dirname(name), mode=0o700, exist_ok=True)
        _replace(name + ".idx", data)
        _replace(name + ".mac", f"{head}\n{mtime_ns}\n{_mac(tree, head, mtime_ns, data)}".encode())
    except OSError:
        return


def _replace(path: str, data: bytes) -> None:
    """``data`` at ``path`` whole or not at all (a cache: replaced, never published)."""
    fd, temp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(temp, path)  # noqa: TID251 - a cache outside the tree, rewritten whole
    except BaseException:
        os.unlink(temp)
        raise

"""A cache file outside the project: read bounded, written whole, and never worth an error.

Unlike a handoff file, a cache is meant to be replaced: it is written under a temp name (mode
0600, ``O_EXCL|O_NOFOLLOW``) and renamed over the old one, so a reader sees the old cache or the
new one, never a mix. It is not fsynced: losing it costs a slower walk, nothing else. Every OS
error is swallowed here, at the one place a cache touches the disk, because no answer may depend
on it.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from handoff_core.files.paths import read_open
from handoff_core.files.publishing import temp_name

__all__ = ["load_cache", "save_cache"]

_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
_WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def load_cache(path: Path, limit: int) -> bytes | None:
    """The cache's bytes; None when it is missing, not a regular file, unreadable or over ``limit``."""
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not (stat.S_ISREG(info.st_mode) and info.st_uid == os.getuid()):
            return None  # another user's file, or not a file at all: never trust it
        data = read_open(fd, info.st_size, limit)
        return data if len(data) <= limit else None
    except OSError:
        return None
    finally:
        os.close(fd)


def save_cache(path: Path, data: bytes) -> bool:
    """Replace the cache with ``data``; False (and nothing left behind) when it cannot be written."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError:
        return False
    temp = path.with_name(temp_name(path.name))
    try:
        fd = os.open(temp, _WRITE_FLAGS, 0o600)
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temp, path)  # noqa: TID251 - a cache, unlike a handoff file, is meant to be replaced whole
        return True
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        return False

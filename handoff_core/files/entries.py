"""One directory entry read by handle: a regular file's bytes (bounded), a symlink reported, never followed."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from contextlib import ExitStack

from handoff_core.contract.snapshot import MISSING, Entry, Stamp
from handoff_core.files.paths import check_name, entry_mode, open_dir, read_open
from handoff_core.layout import HANDOFF_FILES, MAX_FILE_BYTES

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: handoff-validate never loads it
if TYPE_CHECKING:
    from handoff_core.layout import EntryKind

__all__ = ["exists_dir", "read_entry", "shown_name", "stamp_of", "try_open"]

_SAFE_NAMES = frozenset(HANDOFF_FILES)  # the walk's own constants: checked once, here, not per task
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def _kind(mode: int) -> EntryKind:
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "dir"
    return "symlink" if stat.S_ISLNK(mode) else "other"


def stamp_of(info: os.stat_result) -> Stamp:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)


def shown_name(name: str) -> str:
    """A directory name fit to show and serialise: bytes that are not UTF-8 are escaped.

    Such an id fails validation by name anyway; escaping keeps it printable in the meantime.
    """
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return name


def read_entry(
    dir_fd: int, name: str, limit: int = MAX_FILE_BYTES, *, before_read: Callable[[int], object] | None = None
) -> Entry:
    """One directory entry, read when it is a regular file; symlinks are reported, never followed.

    ``before_read`` is called with a regular file's descriptor after its ``fstat``, before its read."""
    try:
        fd = os.open(name if name in _SAFE_NAMES else check_name(name), _READ_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        return MISSING
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return Entry(kind="symlink")
        info = entry_mode(dir_fd, name)  # a socket or similar that cannot be opened
        return MISSING if info is None else Entry(kind=_kind(info.st_mode), nlink=info.st_nlink)
    try:
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode):
            return Entry(kind=_kind(opened.st_mode), nlink=opened.st_nlink)
        if before_read is not None:
            before_read(fd)
        data = read_open(fd, opened.st_size, limit)
        if len(data) > limit:
            return Entry(
                kind="file",
                data=None,
                nlink=opened.st_nlink,
                mtime=opened.st_mtime,
                stamp=stamp_of(opened),
                oversize=True,
            )
        return Entry(kind="file", data=data, nlink=opened.st_nlink, mtime=opened.st_mtime, stamp=stamp_of(opened))
    finally:
        os.close(fd)


def exists_dir(dir_fd: int, name: str) -> bool:
    info = entry_mode(dir_fd, name)
    return info is not None and not stat.S_ISREG(info.st_mode)


def try_open(stack: ExitStack, fd: int, parts: tuple[str, ...]) -> int | None:
    for part in parts:
        if not exists_dir(fd, part):
            return None
        fd = open_dir(fd, part)
        stack.callback(os.close, fd)
    return fd

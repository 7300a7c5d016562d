"""Confinement: directories are reached by walking validated names from a directory handle.

Nothing here trusts a resolved path: every step opens the next component relative to the
previous handle with ``O_NOFOLLOW|O_DIRECTORY``, so a symlink swapped in mid-way fails the
open instead of redirecting a write.
"""

from __future__ import annotations

import errno
import os
import stat
import unicodedata
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from handoff_core.errors import TooLarge, UnsafePath
from handoff_core.layout import MAX_FILE_BYTES

__all__ = ["check_name", "entry_mode", "open_dir", "open_root", "read_open", "read_regular", "walked"]

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def check_name(name: str) -> str:
    """One path component the walker may use."""
    bad = (
        name in ("", ".", "..")
        or any(ch in name for ch in "/\\\x00")
        or name.startswith("-")
        or name[1:2] == ":"  # a drive letter
        or name != name.strip()
    )
    if bad:
        raise UnsafePath(
            f"refused path component {name!r}: use a plain name (no '/', '\\', '..', leading '-', "
            "drive letter or surrounding spaces)"
        )
    return name


def fold(name: str) -> str:
    return unicodedata.normalize("NFC", name).casefold()


def collision(dir_fd: int, name: str) -> str | None:
    """A sibling that differs from ``name`` only by case or Unicode normalisation."""
    key = fold(name)
    return next((other for other in os.listdir(dir_fd) if other != name and fold(other) == key), None)


def open_dir(parent_fd: int, name: str, *, create: bool = False) -> int:
    check_name(name)
    if create:
        if (other := collision(parent_fd, name)) is not None:
            raise UnsafePath(f"{name!r} collides with existing {other!r} (case or Unicode form): rename one")
        try:
            os.mkdir(name, 0o755, dir_fd=parent_fd)
        except FileExistsError:
            pass
        else:
            os.fsync(parent_fd)  # the new directory's name is durable before anything is published in it
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            kind = "a symlink" if is_symlink(parent_fd, name) else "not a directory"
            raise UnsafePath(f"{name!r} is {kind}: handoff directories must be real directories") from exc
        raise


def is_symlink(dir_fd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except FileNotFoundError:
        return False


def open_root(path: str | os.PathLike[str]) -> int:
    """The state root itself is the caller's choice; only what lies below it is walked."""
    return os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)


@contextmanager
def walked(root: str | os.PathLike[str], parts: Sequence[str], *, create: bool = False) -> Iterator[int]:
    """A handle on ``root/parts…``, every component checked; closed on exit."""
    fd = open_root(root)
    try:
        for part in parts:
            child = open_dir(fd, part, create=create)
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


def entry_mode(dir_fd: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(check_name(name), dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def read_regular(dir_fd: int, name: str, *, limit: int = MAX_FILE_BYTES) -> bytes:
    """Bytes of a regular, singly linked file; anything else is refused."""
    try:
        fd = os.open(check_name(name), _FILE_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafePath(f"{name} is a symlink: handoff files must be regular files") from exc
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnsafePath(f"{name} is not a regular file")
        if info.st_nlink != 1:
            raise UnsafePath(f"{name} has {info.st_nlink} hard links: handoff files must have exactly one")
        data = read_open(fd, info.st_size, limit)
        if len(data) > limit:
            raise TooLarge(f"{name} is larger than the {limit}-byte limit for handoff files; it cannot be read here")
        return data
    finally:
        os.close(fd)


def read_open(fd: int, size_hint: int, limit: int) -> bytes:
    """Up to ``limit + 1`` bytes of an open file, sized by ``size_hint`` (a huge read buffer costs time)."""
    chunks = []
    remaining = limit + 1
    while remaining > 0:
        want = min(remaining, max(size_hint + 1, 4096))
        chunk = os.read(fd, want)
        chunks.append(chunk)
        remaining -= len(chunk)
        # Short of what was asked, with every byte the file had when it was stat'ed: its end. (One
        # read per file instead of two; a short read before that size, as over FUSE, reads on.)
        if not chunk or (len(chunk) < want and limit + 1 - remaining == size_hint):
            break
    return b"".join(chunks)

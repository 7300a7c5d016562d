"""A file the Lead downloaded and names by path (an external return): read once, bounded, and only
when it is a plain file the Lead may hand over.

The path comes from a model that may have read hostile text, so it chooses nothing on its own:
the file is looked up without following a link (a device is never opened: opening one can act),
then opened once with ``O_NOFOLLOW`` and judged by that handle (``fstat``, the same file as looked
up, and on Linux the kernel's own name for it). Kernel views (``/proc``,
``/sys``, ``/dev``), devices, FIFOs, sockets and links are refused, and so is every file or folder
the caller lists as forbidden (the token secret, the user cache directory): their bytes must never be copied
into the project, where every executor could read them.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Sequence
from pathlib import Path

from handoff_core.errors import InvalidContent, TooLarge, UnsafePath
from handoff_core.files.paths import read_open

__all__ = ["KERNEL_VIEWS", "read_download"]

KERNEL_VIEWS = (Path("/proc"), Path("/sys"), Path("/dev"))  # files made up by the kernel on reading
_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0)
_NEXT = "give the path of the file you downloaded (a plain file, not a link)"


def _below(path: Path, roots: Sequence[Path]) -> Path | None:
    return next((root for root in roots if path == root or root in path.parents), None)


def _opened_as(fd: int, given: Path) -> Path:
    """The kernel's name for the open file (Linux); elsewhere the path resolved before opening."""
    try:
        return Path(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        return Path(os.path.realpath(given))


def _judge(fd: int, given: Path, forbidden: Sequence[Path], limit: int) -> int:
    """The file's size when it may be read; else UnsafePath or TooLarge naming what is wrong."""
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        raise UnsafePath(f"{given} is a device, FIFO, socket or folder, not a downloaded file: {_NEXT}")
    real = _opened_as(fd, given)
    roots = [Path(os.path.realpath(root)) for root in forbidden]
    if (view := _below(real, KERNEL_VIEWS) or _below(given, KERNEL_VIEWS)) is not None:
        raise UnsafePath(f"{given} is under {view}, a kernel view, never a download: {_NEXT}")
    same = [root for root in forbidden if _same_file(root, info)]
    if same or _below(real, roots) is not None:
        raise UnsafePath(f"{given} is a file this server keeps private (its secrets or cache): {_NEXT}")
    if info.st_size > limit:
        raise TooLarge(f"{given} is {info.st_size} bytes, over the {limit}-byte limit for this return; nothing read")
    return info.st_size


def _same_file(path: Path, info: os.stat_result) -> bool:
    try:
        other = os.stat(path)
    except OSError:
        return False
    return (other.st_dev, other.st_ino) == (info.st_dev, info.st_ino)


def _looked_up(given: Path) -> os.stat_result:
    """What the path names before it is opened: a device is never opened (opening one can act)."""
    try:
        info = os.lstat(given)
    except OSError as exc:
        raise InvalidContent(f"cannot open {given}: {exc.strerror}; {_NEXT}") from exc
    if stat.S_ISLNK(info.st_mode):
        raise UnsafePath(f"{given} is a symlink: {_NEXT}")
    if not stat.S_ISREG(info.st_mode) or _below(Path(os.path.realpath(given)), KERNEL_VIEWS) is not None:
        raise UnsafePath(f"{given} is a kernel view, device, FIFO, socket or folder, not a downloaded file: {_NEXT}")
    return info


def read_download(path: str, *, forbidden: Sequence[Path], limit: int) -> bytes:
    """The bytes of the plain file at the absolute ``path``, at most ``limit`` of them."""
    given = Path(path)
    if not given.is_absolute():
        raise UnsafePath(f"{path!r} is not an absolute path: {_NEXT}")
    before = _looked_up(given)
    try:
        fd = os.open(given, _FLAGS)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafePath(f"{path} is a symlink: {_NEXT}") from exc
        raise InvalidContent(f"cannot open {path}: {exc.strerror}; {_NEXT}") from exc
    try:
        if not os.path.samestat(before, os.fstat(fd)):
            raise UnsafePath(f"{path} was replaced while it was opened: {_NEXT}")
        size = _judge(fd, given, forbidden, limit)
        data = read_open(fd, size, limit)
    finally:
        os.close(fd)
    if len(data) != size:  # grown, shrunk or made up while read: not one settled download
        raise UnsafePath(f"{path} changed size while it was read ({size} bytes declared): {_NEXT}")
    return data

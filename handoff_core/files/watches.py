"""Kernel notice (Linux inotify) of any change to chosen inodes, read without ever blocking.

A watch is on an inode, not a name: a write, truncate, chmod, link or unlink made through any of
its names is reported to it (a link count change is an ``IN_ATTRIB``), and so is its own rename or
removal. A directory's watch also reports each entry made, removed or renamed in it, and a change
of any child's attributes. The kernel queues an event inside the syscall that makes the change, so
a change that was complete before ``drain`` is among what it returns.

``drain`` returns None when the kernel's queue overflowed or more events were waiting than one
drain reads: something may have been missed, and the caller must trust nothing it watched.
``add`` returns None when the watch cannot be had (the per-user limit, this instance's ``cap``,
a name that is gone): the caller must then look at that inode itself, as if no watch existed.
"""

from __future__ import annotations

import ctypes
import errno
import os
import re
import select
import struct
import weakref
from pathlib import Path
from typing import Any, NamedTuple

__all__ = ["CHANGES", "LOCAL_FILESYSTEMS", "Event", "MountTable", "Watches", "local_events"]

IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE = 0x2, 0x4, 0x8
IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x40, 0x80, 0x100, 0x200
IN_DELETE_SELF, IN_MOVE_SELF = 0x400, 0x800
IN_Q_OVERFLOW, IN_IGNORED = 0x4000, 0x8000
IN_ONLYDIR, IN_DONT_FOLLOW = 0x01000000, 0x02000000
CHANGES = (
    IN_MODIFY
    | IN_ATTRIB
    | IN_CLOSE_WRITE
    | IN_MOVED_FROM
    | IN_MOVED_TO
    | IN_CREATE
    | IN_DELETE
    | IN_DELETE_SELF
    | IN_MOVE_SELF
)
_HEADER = struct.Struct("iIII")  # wd, mask, cookie, len of the NUL-padded name that follows
_OUT_OF_WATCHES = (errno.ENOSPC, errno.ENOMEM)

# Filesystems whose every writer is a local process, so every write passes through this kernel and
# reaches its watches. Any other (NFS, SMB, FUSE, 9p, overlay, ...) may be written where no
# event is made: a root on one is never watched.
LOCAL_FILESYSTEMS = frozenset({"ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "f2fs", "bcachefs", "jfs"})
MAX_MOUNTINFO_BYTES = 4 << 20
_POINT = 4  # the mount point's field in a line of mountinfo
_OCTAL = re.compile(rb"\\([0-7]{3})")


class Event(NamedTuple):
    wd: int
    mask: int
    name: str  # "" for an event of the watched inode itself


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    for name in ("inotify_init1", "inotify_add_watch", "inotify_rm_watch"):
        getattr(libc, name)  # AttributeError: no inotify on this system
    return libc


class Watches:
    """One inotify instance. ``cap`` bounds the watches it holds (the kernel's own limit is per user);
    ``max_events`` bounds what one ``drain`` reads before it gives up (as an overflow)."""

    def __init__(self, cap: int | None = None, max_events: int = 1 << 16) -> None:
        try:
            self._lib = _libc()
        except (OSError, AttributeError) as exc:
            raise OSError(errno.ENOSYS, "no inotify on this system") from exc
        fd = self._lib.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1 failed")
        self.fd = fd
        self._closer = weakref.finalize(self, os.close, fd)
        self.cap = cap
        self.max_events = max_events
        self.live: set[int] = set()

    def add(self, dir_fd: int, name: str = "") -> int | None:
        """Watch the directory open as ``dir_fd`` itself, or the entry ``name`` in it (never followed)."""
        if self.cap is not None and len(self.live) >= self.cap:
            return None
        path = f"/proc/self/fd/{dir_fd}/{name}" if name else f"/proc/self/fd/{dir_fd}"
        mask = CHANGES | (IN_DONT_FOLLOW if name else IN_ONLYDIR)
        wd = self._lib.inotify_add_watch(self.fd, os.fsencode(path), ctypes.c_uint32(mask))
        if wd < 0:
            return None  # ENOSPC/ENOMEM (out of watches), ENOENT (gone), EACCES: no watch, never an error
        self.live.add(wd)
        return int(wd)

    def remove(self, wd: int) -> None:
        if wd in self.live:
            self.live.discard(wd)
            self._lib.inotify_rm_watch(self.fd, wd)  # an IN_IGNORED follows

    def drain(self) -> list[Event] | None:
        """Every event queued so far; None when any may have been lost."""
        events: list[Event] = []
        while True:
            try:
                data = os.read(self.fd, 64 * 1024)
            except BlockingIOError:
                return events
            offset = 0
            while offset + _HEADER.size <= len(data):
                wd, mask, _, size = _HEADER.unpack_from(data, offset)
                raw = data[offset + _HEADER.size : offset + _HEADER.size + size]
                offset += _HEADER.size + size
                if mask & IN_Q_OVERFLOW or wd < 0:
                    return None
                if mask & IN_IGNORED:
                    self.live.discard(wd)
                events.append(Event(wd, mask, os.fsdecode(raw.rstrip(b"\0"))))
            if len(events) > self.max_events:
                return None

    def close(self) -> None:
        self._closer()


class MountTable:
    """Which roots a watch can be trusted under, decided again only when the kernel says the mount
    table changed (a poll of mountinfo reports ``POLLPRI`` once after each mount or unmount)."""

    def __init__(self, mountinfo: Path = Path("/proc/self/mountinfo")) -> None:
        self._path = mountinfo
        self._poll = select.poll()
        self._fd: int | None = None
        self._closer: weakref.finalize[Any, MountTable] | None = None
        self._decided: dict[bytes, bool] = {}

    def local(self, root: Path) -> bool:
        """Whether every inode under ``root`` is one a watch there would see changed: its mount is of a
        local filesystem, and nothing is mounted below it (a mount hides the inode a watch is on).
        False when that cannot be told."""
        try:
            real = os.fsencode(os.path.realpath(root))
            if self._fd is None or self._poll.poll(0):
                self._decided = {}
                self._text = self._read()
        except OSError:
            self._decided = {}
            return False
        if real not in self._decided:
            self._decided[real] = _local(self._text, real)
        return self._decided[real]

    def _read(self) -> bytes:
        if self._fd is None:
            self._fd = os.open(self._path, os.O_RDONLY | os.O_CLOEXEC)
            self._closer = weakref.finalize(self, os.close, self._fd)
            self._poll.register(self._fd, select.POLLPRI | select.POLLERR)
            self._poll.poll(0)  # what it would report now is read next
        os.lseek(self._fd, 0, os.SEEK_SET)
        chunks, size = [], 0
        while size <= MAX_MOUNTINFO_BYTES and (chunk := os.read(self._fd, 64 * 1024)):
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)

    def close(self) -> None:
        if self._closer is not None:
            self._closer()


def local_events(path: Path, mountinfo: Path = Path("/proc/self/mountinfo")) -> bool:
    """``MountTable.local`` read once."""
    table = MountTable(mountinfo)
    try:
        return table.local(path)
    finally:
        table.close()


def _local(text: bytes, real: bytes) -> bool:
    if len(text) > MAX_MOUNTINFO_BYTES or not text:
        return False
    best, kind, below = b"", b"", False
    for line in text.splitlines():
        fields, _, rest = line.partition(b" - ")
        parts = fields.split()
        if len(parts) <= _POINT or not rest:
            continue
        point = _OCTAL.sub(lambda m: bytes([int(m[1], 8) & 0xFF]), parts[_POINT])  # \040 and the like
        inside = real == point or real.startswith(point.rstrip(b"/") + b"/")
        if inside and len(point) >= len(best):
            best, kind = point, rest.split()[0]
        below = below or point.startswith(real.rstrip(b"/") + b"/")
    return not below and kind.decode("ascii", "replace") in LOCAL_FILESYSTEMS

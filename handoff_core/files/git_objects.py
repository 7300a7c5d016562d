"""Commits read from git's object files, with no git process: a commit's parents, and the line of
commits from a checkpoint back to its base (what ``rev-list --parents`` lists for ``base..checkpoint``).

A commit is read loose, else whole from a pack its ``.idx`` (version 2) files it in (``_packed``). An
object's name is the hash of its bytes: an object whose inflated bytes do not hash to the name it is
found under is not read, so whoever writes the objects folder cannot make a commit say another thing
here. Only what git itself would read the same way is answered: a commit that is absent, stored as
a delta, odd or too big, a merge, a history longer than ``MAX_LINE``, and a repository that rewrites
parents for git (``info/grafts``, a ``shallow`` file) are ``None``: the caller asks git. Every read is
bounded.
"""

from __future__ import annotations

import hashlib
import os
import stat
import struct
import zlib

from handoff_core.files.git_config import small_file

__all__ = ["MAX_COMMIT", "MAX_LINE", "line_of", "parents_of"]

MAX_COMMIT = 256 * 1024  # bytes of one commit object, inflated (a message past this is left to git)
MAX_LINE = 64  # commits walked from the checkpoint back to the base; a longer line is left to git
MAX_PACKS = 64  # .idx files looked in; past this git is asked
_IDX = b"\377tOc\0\0\0\2"  # a version 2 pack index's first 8 bytes
_FANOUT = 8 + 256 * 4
_COMMIT = 1  # a pack entry's type: a whole commit (a delta or any other is left to git)
_HASHES = {40: "sha1", 64: "sha256"}
_HEX = frozenset("0123456789abcdef")


def _named(oid: str) -> bool:
    return len(oid) in _HASHES and set(oid) <= _HEX


def parents_of(common_dir: bytes, oid: str) -> list[str] | None:
    """The parents of the loose commit ``oid`` in the repository whose common git dir is ``common_dir``;
    None when it is no loose commit whose bytes hash to its name."""
    if not _named(oid):
        return None
    raw = _loose(common_dir, oid)
    raw = raw if raw is not None else _packed(common_dir, oid)
    if raw is None or hashlib.new(_HASHES[len(oid)], raw).hexdigest() != oid:
        return None
    header, _, body = raw.partition(b"\0")
    lines = body.split(b"\n")
    tree = lines[0][5:].decode("ascii", "replace") if lines[0].startswith(b"tree ") else ""
    if header != b"commit %d" % len(body) or len(tree) != len(oid) or not _named(tree):
        return None
    found = []
    for line in lines[1:]:  # git reads the parents right after the tree, and no further
        if not line.startswith(b"parent "):
            break
        parent = line[7:].decode("ascii", "replace")
        if len(parent) != len(oid) or not _named(parent):
            return None
        found.append(parent)
    return found


def _inflated(data: bytes, limit: int) -> bytes | None:
    """The one zlib stream ``data`` begins with, inflated, when it ends within ``limit`` bytes."""
    inflate = zlib.decompressobj()
    try:
        raw = inflate.decompress(data, limit + 1)
    except zlib.error:
        return None
    return raw if inflate.eof and len(raw) <= limit else None


def _loose(common_dir: bytes, oid: str) -> bytes | None:
    path = os.path.join(common_dir, b"objects", oid[:2].encode(), oid[2:].encode())
    packed = small_file(path, limit=MAX_COMMIT)
    return _inflated(packed, MAX_COMMIT + 32) if packed else None


def _packed(common_dir: bytes, oid: str) -> bytes | None:
    """The object ``oid`` as a loose object holds it (header, NUL, body) when a pack holds it as a whole
    commit; None when no ``.idx`` of at most ``MAX_PACKS`` files it, or the entry is anything else."""
    folder = os.path.join(common_dir, b"objects", b"pack")
    try:
        names = sorted(name for name in os.listdir(folder) if name.endswith(b".idx"))
    except OSError:
        return None
    if len(names) > MAX_PACKS:
        return None
    for name in names:
        found = _indexed(os.path.join(folder, name), bytes.fromhex(oid))
        if found is not None:
            return _entry(os.path.join(folder, name[:-4] + b".pack"), found)
    return None


def _opened(path: bytes) -> int | None:
    """A descriptor of the regular file ``path`` (no link followed, no wait on a FIFO), or None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    if stat.S_ISREG(os.fstat(fd).st_mode):
        return fd
    os.close(fd)
    return None


def _read_at(fd: int, size: int, offset: int) -> bytes:
    data = os.pread(fd, size, offset)
    if len(data) != size:
        raise OSError("short read")
    return data


def _indexed(idx: bytes, name: bytes) -> int | None:
    """The offset in its pack of the object ``name`` a version 2 ``.idx`` files, by binary search."""
    fd = _opened(idx)
    if fd is None:
        return None
    try:
        if _read_at(fd, 8, 0) != _IDX:
            return None
        fanout = struct.unpack(">256I", _read_at(fd, 256 * 4, 8))
        total, low, high, width = fanout[255], fanout[name[0] - 1] if name[0] else 0, fanout[name[0]], len(name)
        while low < high:
            middle = (low + high) // 2
            said = _read_at(fd, width, _FANOUT + middle * width)
            if said == name:
                at = _FANOUT + total * (width + 4) + middle * 4
                offset = int(struct.unpack(">I", _read_at(fd, 4, at))[0])
                if offset & 0x80000000:
                    large = _FANOUT + total * (width + 8) + (offset & 0x7FFFFFFF) * 8
                    offset = int(struct.unpack(">Q", _read_at(fd, 8, large))[0])
                return offset
            low, high = (middle + 1, high) if said < name else (low, middle)
        return None
    except (OSError, struct.error, IndexError):
        return None
    finally:
        os.close(fd)


def _entry(pack: bytes, offset: int) -> bytes | None:
    """The whole commit at ``offset`` in ``pack`` (its type and size, then one zlib stream), with the
    header a loose object bears; None for a delta, another type, or one past ``MAX_COMMIT``."""
    fd = _opened(pack)
    if fd is None:
        return None
    try:
        head = os.pread(fd, 16, offset)
        if not head or (head[0] >> 4) & 7 != _COMMIT:
            return None
        size, shift, at = head[0] & 15, 4, 0
        while head[at] & 0x80:
            at += 1
            size |= (head[at] & 0x7F) << shift
            shift += 7
        if size > MAX_COMMIT:
            return None
        body = _inflated(os.pread(fd, size + 64 + size // 100, offset + at + 1), size)
    except (OSError, IndexError):
        return None
    finally:
        os.close(fd)
    return None if body is None or len(body) != size else b"commit %d\0" % size + body


def line_of(common_dir: bytes, base: str, checkpoint: str) -> list[list[str]] | None:
    """The commits from ``checkpoint`` back to (not including) ``base``, each with its one parent, newest
    first — ``rev-list --parents checkpoint --not base`` on a line — when each is a loose commit with one
    parent and the line reaches ``base`` within ``MAX_LINE``; None for anything else (git decides)."""
    for rewrites in (b"shallow", os.path.join(b"info", b"grafts")):
        if os.path.lexists(os.path.join(common_dir, rewrites)):
            return None
    found: list[list[str]] = []
    at = checkpoint
    while at != base:
        parents = parents_of(common_dir, at)
        if parents is None or len(parents) != 1 or len(found) >= MAX_LINE:
            return None
        found.append([at, parents[0]])
        at = parents[0]
    return found if found else None

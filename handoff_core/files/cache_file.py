"""A cache file outside the project: read bounded, written whole, trusted only when this user wrote it.

Unlike a handoff file, a cache is meant to be replaced: it is written whole under a temp name
(mode 0600) and renamed over the old one (``publishing.replace_whole``), so a reader sees the old
cache or the new one, never a mix. It is not fsynced: losing it costs a request, nothing else.
Every OS error is swallowed here, at the one place a cache touches the disk, because no answer may
depend on it.

A cache can still spare a request (the guard's copy of a TASK), so it is used only when no one but
this user can have written it: the cache directory and the file must be this user's and writable
by no group or other user, and each file carries an HMAC-SHA256 of its name and bytes under a
per-user key kept beside it (``cache.key``, mode 0600, made once on first use and linked into
place, never replaced). A file edited by hand, copied from elsewhere or written under another key
fails the MAC and is ignored. Anything untrusted is ignored with a warning on the
``handoff_core.cache`` logger; it is never an error.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import logging
import os
import secrets
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path

from handoff_core.errors import HandoffError
from handoff_core.files.paths import read_open
from handoff_core.files.publishing import publish, replace_whole

__all__ = ["KEY_FILE", "load_cache", "save_cache"]

KEY_FILE = "cache.key"
_KEY_BYTES = 32
_MAC_LABEL = b"hmac-sha256:"
_MAC_LINE = len(_MAC_LABEL) + 64 + 1  # the label, 64 hex digits, a newline
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC

log = logging.getLogger("handoff_core.cache")


def _private(info: os.stat_result, what: str, where: Path, mask: int = 0o022) -> bool:
    """Whether only this user can have written it (nor, with ``mask`` 0o077, read it); a warning says why not."""
    if info.st_uid != os.getuid():
        log.warning("cache %s %s belongs to another user (uid %d): not used", what, where, info.st_uid)
        return False
    if info.st_mode & mask:
        log.warning("cache %s %s has mode %o, open to others: not used", what, where, info.st_mode & 0o777)
        return False
    return True


def _open_dir(directory: Path, *, create: bool) -> int | None:
    try:
        if create:
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(directory, _DIR_FLAGS)
    except OSError:
        return None
    if _private(os.fstat(fd), "directory", directory):
        return fd
    os.close(fd)
    return None


def _read(dir_fd: int, name: str, limit: int, directory: Path, mask: int = 0o022) -> bytes | None:
    """A regular file of the cache directory that only this user can have written, up to ``limit`` bytes."""
    try:
        fd = os.open(name, _READ_FLAGS, dir_fd=dir_fd)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or not _private(info, "file", directory / name, mask):
            return None
        data = read_open(fd, info.st_size, limit)
        return data if len(data) <= limit else None
    finally:
        os.close(fd)


def _key(dir_fd: int, directory: Path, *, create: bool) -> bytes | None:
    """This user's cache key: made on first use (written whole, linked into place, never replaced), else read."""
    try:
        os.stat(KEY_FILE, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        if not create:
            return None  # nothing was ever signed here
        with contextlib.suppress(HandoffError, OSError):  # another server made one first: read theirs
            publish(dir_fd, KEY_FILE, secrets.token_bytes(_KEY_BYTES), mode=0o600)
    key = _read(dir_fd, KEY_FILE, _KEY_BYTES, directory, mask=0o077)
    if key is not None and len(key) != _KEY_BYTES:
        log.warning("cache key %s is not %d bytes: the cache is not used", directory / KEY_FILE, _KEY_BYTES)
        return None
    return key


def _mac(key: bytes, name: str, data: bytes | memoryview) -> bytes:
    mac = hmac.new(key, name.encode() + b"\0", hashlib.sha256)
    mac.update(data)  # not concatenated: a cache runs to many megabytes
    return mac.hexdigest().encode()


def load_cache(path: Path, limit: int) -> bytes | None:
    """The cache's bytes; None when it is missing, not a regular file, not private, over ``limit``,
    or not signed with this user's key."""
    dir_fd = _open_dir(path.parent, create=False)
    if dir_fd is None:
        return None
    try:
        key = _key(dir_fd, path.parent, create=False)
        signed = _read(dir_fd, path.name, limit + _MAC_LINE, path.parent) if key is not None else None
    except OSError:
        return None
    finally:
        os.close(dir_fd)
    if key is None or signed is None:
        return None
    head, data = signed[:_MAC_LINE], signed[_MAC_LINE:]
    mac = head[len(_MAC_LABEL) : -1]
    if not (
        head.startswith(_MAC_LABEL) and head.endswith(b"\n") and hmac.compare_digest(mac, _mac(key, path.name, data))
    ):
        log.warning("cache file %s is not signed with this user's cache key: not used", path)
        return None
    return data


def save_cache(path: Path, data: bytes | Iterable[bytes]) -> bool:
    """Replace the cache with ``data``, signed; False (and nothing left behind) when it cannot be written.

    ``data`` may be parts, each made as it is written and signed as it goes, its signature written
    last over the room left for it: a cache of many megabytes is then never held whole."""
    dir_fd = _open_dir(path.parent, create=True)
    if dir_fd is None:
        return False
    try:
        key = _key(dir_fd, path.parent, create=True)
        if key is None:
            return False
        if isinstance(data, bytes):
            head = _MAC_LABEL + _mac(key, path.name, data) + b"\n"
            replace_whole(dir_fd, path.name, head, data, mode=0o600, durable=False)
        else:
            _save_streamed(dir_fd, path.name, key, data)
        return True
    except OSError:
        return False
    finally:
        os.close(dir_fd)


def _save_streamed(dir_fd: int, name: str, key: bytes, parts: Iterable[bytes]) -> None:
    """``parts`` written one by one and signed as they go, the signature last over the room left for it."""
    mac = hmac.new(key, name.encode() + b"\0", hashlib.sha256)

    def signed() -> Iterator[bytes]:
        for part in parts:
            mac.update(part)
            yield part

    def head() -> bytes:
        return _MAC_LABEL + mac.hexdigest().encode() + b"\n"

    replace_whole(dir_fd, name, b"\0" * _MAC_LINE, mode=0o600, durable=False, streamed=signed(), head=head)

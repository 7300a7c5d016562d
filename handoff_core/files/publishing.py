"""Write-once publishing (SPEC §10), and the one replace-whole write for the files meant to change.

A temp file in the same directory (``O_EXCL|O_NOFOLLOW``), written and fsynced, is linked to the
final name with ``os.link`` — which refuses to replace — then removed; the directory is fsynced
and the final file read back. A crash at any step leaves either no final file or a complete one;
a leftover temp file is never a handoff file (its name is ``layout.temp_name``'s).

A file meant to change (a cache, the coordination choice) goes through the same temp file and is
renamed over the old one (``replace_whole``): a reader sees the old file or the new one, never a mix.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import secrets
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from handoff_core.errors import StorageError, UnsafePath, WriteConflict
from handoff_core.files.paths import check_name, read_regular
from handoff_core.layout import TEMP_TOKEN_BYTES, temp_name, temp_target

__all__ = ["Published", "new_temp_name", "publish", "repair_links", "replace_whole"]

_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass(frozen=True)
class Published:
    name: str
    created: bool  # False: identical bytes were already there (an idempotent retry)


def new_temp_name(name: str) -> str:
    """A fresh temp name for publishing ``name``, never one another writer holds."""
    return temp_name(name, secrets.token_hex(TEMP_TOKEN_BYTES))


def _write_temp(
    dir_fd: int,
    temp: str,
    parts: Iterable[bytes],
    mode: int,
    *,
    sync: bool = True,
    head: Callable[[], bytes] | None = None,
) -> None:
    fd = os.open(temp, _TEMP_FLAGS, 0o600, dir_fd=dir_fd)
    try:
        for data in parts:  # in parts: a cache of many megabytes is never copied to be joined
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        if head is not None:  # known once every part is written: over the first bytes, which were its room
            first, done = head(), 0
            while done < len(first):
                done += os.pwrite(fd, first[done:], done)
        os.fchmod(fd, mode)
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)


def repair_links(dir_fd: int, name: str) -> bool:
    """Remove our own temp names still linked to ``name`` (a crash struck between link and unlink).

    Only a temp name of this very file, pointing at the same inode, is removed: the final file
    was complete before it was linked, so what is left is exactly what was published.
    """
    final = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    if final.st_nlink <= 1 or not stat.S_ISREG(final.st_mode):  # no second name: nothing to repair
        return False
    repaired = False
    for other in os.listdir(dir_fd):
        if temp_target(other) == name:
            try:
                info = os.stat(other, dir_fd=dir_fd, follow_symlinks=False)
                if (info.st_ino, info.st_dev) == (final.st_ino, final.st_dev):
                    os.unlink(other, dir_fd=dir_fd)
                    repaired = True
            except FileNotFoundError:
                continue  # its own writer unlinked it after our listing (a publish in flight): nothing to do
    if repaired:
        os.fsync(dir_fd)
    return repaired


def _settle_existing(dir_fd: int, name: str, data: bytes) -> None:
    """The name is taken: identical bytes are success, anything else is a conflict."""
    repair_links(dir_fd, name)
    try:
        existing = read_regular(dir_fd, name, limit=max(len(data), 1) * 2 + 4096)
    except UnsafePath as exc:
        raise WriteConflict(
            f"{name} already exists and is not a plain file ({exc.message}); nothing was changed"
        ) from exc
    if existing != data:
        raise WriteConflict(
            f"{name} already exists with other content; it is write-once and was left as it is. "
            "Read it back, and publish anything new under a new task"
        )


def publish(dir_fd: int, name: str, data: bytes, *, mode: int = 0o444, first_wins: bool = False) -> Published:
    """Publish ``data`` as ``name`` in the directory ``dir_fd``, exactly once.

    With ``first_wins`` a name already taken is kept whatever it holds (a secret another process
    made first): ``created`` is False and nothing is compared or read back.
    """
    check_name(name)
    temp = new_temp_name(name)
    created = True
    try:
        _write_temp(dir_fd, temp, (data,), mode)
        try:
            os.link(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
        except FileExistsError:
            created = False
            if not first_wins:
                _settle_existing(dir_fd, name, data)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp, dir_fd=dir_fd)
    os.fsync(dir_fd)
    if (created or not first_wins) and read_regular(dir_fd, name, limit=len(data) + 1) != data:
        raise StorageError(f"{name} did not read back as written; check the disk and the directory")
    return Published(name, created)


def replace_whole(
    dir_fd: int,
    name: str,
    *parts: bytes,
    mode: int = 0o644,
    durable: bool = True,
    streamed: Iterable[bytes] = (),
    head: Callable[[], bytes] | None = None,
) -> None:
    """Replace ``name`` in ``dir_fd`` whole with the bytes of ``parts``, then of ``streamed`` (each part
    made as it is written: a cache of many megabytes is never held whole), for a file meant to change;
    ``head``, asked once all are written, is written over the file's first bytes (of its length).

    Written under a temp name and renamed over the old file; with ``durable`` the file and the
    directory are fsynced (a cache skips it: losing one costs a slower walk). OS errors are the
    caller's to translate or swallow; no temp file is left behind either way.
    """
    check_name(name)
    temp = new_temp_name(name)
    try:
        _write_temp(dir_fd, temp, itertools.chain(parts, streamed), mode, sync=durable, head=head)
        # The one rename over a file: only for files meant to change, never a write-once handoff file.
        os.replace(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)  # noqa: TID251
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp, dir_fd=dir_fd)
    if durable:
        os.fsync(dir_fd)

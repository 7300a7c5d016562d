"""One task's directory, opened by handle: the one way the services read and publish its files.

Also the boundary where the operating system's errors become ``StorageError`` (``translated``),
so nothing above the files layer ever sees an ``OSError``.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from functools import wraps
from pathlib import Path
from typing import ParamSpec, TypeVar

from handoff_core.contract.change import ChangeFacts
from handoff_core.contract.ids import Ref
from handoff_core.contract.snapshot import Entry
from handoff_core.errors import ChangeNotActive, NotFound, StorageError, TaskNotFound, UnsafePath, WriteConflict
from handoff_core.files.change_dir import locate_change
from handoff_core.files.entries import read_entry
from handoff_core.files.paths import entry_mode, open_dir, read_regular
from handoff_core.files.publishing import Published, publish, repair_links
from handoff_core.layout import SESSIONS, TASK_FILE, task_parts

__all__ = ["Roots", "StoredFile", "TaskDir", "open_task_dir", "sha256", "translated"]

P = ParamSpec("P")
R = TypeVar("R")


def translated(fn: Callable[P, R]) -> Callable[P, R]:
    """OS errors leave the files layer as StorageError, with the cause chained."""

    @wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except OSError as exc:
            where = f" ({exc.filename})" if exc.filename else ""
            raise StorageError(
                f"the file system refused the operation: {exc.strerror or exc}{where}; nothing was half-written. "
                "Check permissions and free space, then retry"
            ) from exc

    return wrapper


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class Roots:
    """Where the handoff tree is (state root) and what paths are shown relative to (project root)."""

    state_root: Path
    project_root: Path

    def task_dir(self, ref: Ref) -> Path:
        return self.state_root.joinpath(*task_parts(ref.change, ref.session, ref.task))

    def shown(self, path: Path) -> str:
        """Project-relative when inside the project, else absolute."""
        try:
            return path.relative_to(self.project_root).as_posix()
        except ValueError:
            return path.as_posix()

    def stored(self, ref: Ref, name: str, data: bytes, created: bool, warnings: tuple[str, ...] = ()) -> StoredFile:
        """The answer for the task file ``name`` of ``ref`` holding ``data``, as published (or found)."""
        return StoredFile(
            ref=ref,
            path=self.task_dir(ref) / name,
            sha256=sha256(data),
            created=created,
            text=data.decode(),
            warnings=warnings,
        )


@dataclass(kw_only=True, frozen=True)
class StoredFile:
    ref: Ref
    path: Path
    sha256: str
    created: bool
    text: str
    warnings: tuple[str, ...] = ()


class TaskDir:
    """An open task directory: read a file (required or optional) and publish one, by name."""

    def __init__(self, fd: int, ref: Ref, facts: ChangeFacts) -> None:
        self.fd, self.ref, self.facts = fd, ref, facts

    def read(self, name: str) -> bytes:
        """A regular, singly linked file (a link a crashed publish left is repaired first); its absence is
        the caller's ``NotFound``."""
        try:
            return read_regular(self.fd, name)
        except UnsafePath:
            if not repair_links(self.fd, name):
                raise
            return read_regular(self.fd, name)
        except FileNotFoundError:
            if name == TASK_FILE:
                raise TaskNotFound(f"task {self.ref} has no {TASK_FILE}; it was never dispatched") from None
            raise NotFound(f"{self.ref} has no {name}") from None

    def read_optional(self, name: str) -> bytes | None:
        try:
            return read_regular(self.fd, name)
        except FileNotFoundError:
            return None

    def entry(self, name: str) -> Entry:
        """Whatever is there under ``name``, a symlink or a directory included, never followed."""
        return read_entry(self.fd, name)

    def has(self, name: str) -> bool:
        return entry_mode(self.fd, name) is not None

    def publish(self, name: str, data: bytes) -> Published:
        try:
            return publish(self.fd, name, data)
        except WriteConflict as exc:
            raise WriteConflict(
                f"{self.ref} already has a {name} with other content; it is written once and was left unchanged. "
                "Read it with read_handoff; a fix or retry is a new task"
            ) from exc


@contextmanager
def open_task_dir(state_root: Path, ref: Ref, *, active_only: bool = True) -> Iterator[TaskDir]:
    """The task's directory, walked from the state root by handle; archived changes only when asked."""
    with locate_change(state_root, ref.change) as (facts, change_fd), ExitStack() as stack:
        if active_only and facts.location != "active":
            raise ChangeNotActive(f"change {ref.change} is archived; archived handoffs are frozen")
        fd = change_fd
        for part in (SESSIONS, ref.session, ref.task):
            try:
                fd = open_dir(fd, part)
            except FileNotFoundError:
                raise TaskNotFound(f"no task {ref}; check the ref returned by create_task") from None
            stack.callback(os.close, fd)
        yield TaskDir(fd, ref, facts)

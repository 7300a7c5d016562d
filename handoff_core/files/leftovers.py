"""What crashed or refused work can leave behind: publish temp files and empty round directories.

Neither is ever a handoff file or a completion signal, so removing one old enough that no
publish can still be writing it loses nothing. Found and removed by walking directory handles.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterator
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from handoff_core.errors import HandoffError
from handoff_core.files.paths import walked
from handoff_core.files.publishing import repair_links
from handoff_core.layout import CHANGES, HANDOFF_DOCS, SESSIONS, is_temp, temp_target

__all__ = ["Leftover", "find_leftovers", "remove_leftover"]

LeftoverKind = Literal["temp file", "empty round"]


@dataclass(frozen=True)
class Leftover:
    parts: tuple[str, ...]  # the directory holding it, below the state root
    name: str
    kind: LeftoverKind
    age_seconds: float

    def describe(self) -> str:
        return f"{self.kind}: {'/'.join((*self.parts, self.name))} ({int(self.age_seconds)}s old)"


def _children(fd: int) -> Iterator[tuple[str, os.stat_result]]:
    for name in sorted(os.listdir(fd)):
        with suppress(FileNotFoundError):
            yield name, os.stat(name, dir_fd=fd, follow_symlinks=False)


def _temps(root: Path, parts: tuple[str, ...], now: float) -> Iterator[Leftover]:
    try:
        with walked(root, parts) as fd:
            for name, info in _children(fd):
                if is_temp(name) and stat.S_ISREG(info.st_mode):
                    yield Leftover(parts, name, "temp file", now - info.st_mtime)
    except (FileNotFoundError, NotADirectoryError, HandoffError):
        return


def _rounds(root: Path) -> Iterator[tuple[str, ...]]:
    try:
        with walked(root, CHANGES) as changes_fd:
            changes = [name for name, info in _children(changes_fd) if stat.S_ISDIR(info.st_mode)]
    except (FileNotFoundError, NotADirectoryError, HandoffError):
        return
    for change in changes:
        try:
            with walked(root, (*CHANGES, change, SESSIONS)) as sessions_fd:
                rounds = [name for name, info in _children(sessions_fd) if stat.S_ISDIR(info.st_mode)]
        except (FileNotFoundError, NotADirectoryError, HandoffError):
            continue
        yield from ((*CHANGES, change, SESSIONS, name) for name in rounds)


def find_leftovers(root: Path, now: float | None = None) -> list[Leftover]:
    now = time.time() if now is None else now
    found = list(_temps(root, HANDOFF_DOCS, now))
    for parts in _rounds(root):
        with walked(root, parts) as round_fd:
            entries = list(_children(round_fd))
            if not entries:
                info = os.fstat(round_fd)
                found.append(Leftover(parts[:-1], parts[-1], "empty round", now - info.st_mtime))
        found += _temps(root, parts, now)
        for name, info in entries:
            if stat.S_ISDIR(info.st_mode):
                found += _temps(root, (*parts, name), now)
    return found


def remove_leftover(root: Path, leftover: Leftover) -> bool:
    """Remove one leftover, walked to by handle; False when it is no longer what was found."""
    with walked(root, leftover.parts) as fd:
        if leftover.kind == "empty round":
            try:
                os.rmdir(leftover.name, dir_fd=fd)  # refuses a round that is no longer empty
            except OSError:
                return False
            return True
        final = temp_target(leftover.name)
        with suppress(FileNotFoundError):
            if final is not None and repair_links(fd, final):  # a temp still linked to its published file
                return True
        try:
            os.unlink(leftover.name, dir_fd=fd)
        except FileNotFoundError:
            return False
        os.fsync(fd)
        return True

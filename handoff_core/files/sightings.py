"""The cheapest read of a change's settled tasks: what a cold status glances at, in one walk.

Per task directory: its names, and of its handoff files one ``open`` + ``fstat`` + ``read`` for
TASK.md and REPORT.md and one ``lstat`` for the others; no ``Entry`` per file, and the probe a
glance is held on packed from those very stats (``Sighting.probe``: the judging after the answer
reads the task again and replaces it). Anything that read cannot settle (a file that is not a
singly linked regular file within the size limit, a file or directory changed within the settle
time, a directory that cannot be opened) is read the full way (``reader.task_snapshots``), so
the caller judges it at once. Nothing here decides what is valid.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, TypeVar

from handoff_core.contract.change import ChangeFacts
from handoff_core.contract.snapshot import Probe, TaskSnapshot
from handoff_core.files.change_dir import locate_change
from handoff_core.files.entries import shown_name, try_open
from handoff_core.files.paths import open_dir
from handoff_core.files.reader import held_snapshot, number_counts, packed_probe, round_names, task_snapshots
from handoff_core.layout import LOCATOR_FILE, MAX_FILE_BYTES, RELEASE_FILE, REPORT_FILE, SESSIONS, TASK_FILE

if TYPE_CHECKING:
    from handoff_core.files.reader import Reuse

__all__ = ["Sighting", "opened_sessions", "sight_change", "sight_rounds"]

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_Seen = TypeVar("_Seen")


class Sighting(NamedTuple):
    """One settled task directory whose handoff files are all singly linked regular files within the limit."""

    names: list[str]  # the directory's entry names, unsorted
    task: bytes
    task_mtime: float
    report: bytes | None
    report_mtime: float | None
    release_mtime: float | None
    has_locator: bool
    facts: ChangeFacts | None = None  # the change's, as the walk found it (None: built from a snapshot)
    probe: Probe | None = None  # the directory's probe as ``reader`` takes it, from the inodes read


def sight_change(
    root: Path,
    change: str,
    session: str | None,
    before_ns: int,
    look: Callable[[str, str, Sighting], _Seen | None],
    reuse: Reuse | None = None,
) -> Iterator[_Seen | tuple[str, str, TaskSnapshot]]:
    """Every task of an active change (or one round): ``look(round, task, sighting)`` where it
    returns a value, else the task read the full way, ``(round, task, tree)``.

    ``before_ns``: a file or directory whose ctime is not before it is not sighted (not settled).
    ``look`` is called only for names that need no escaping (``entries.shown_name``).
    ``reuse``: a task directory the caller holds a verdict on is probed by stat calls alone
    (``reader.held_snapshot``) and comes as ``(round, task, tree)`` with ``tree.reused``, unread.
    """
    with opened_sessions(root, change) as (facts, sessions_fd):
        if sessions_fd is not None:
            yield from sight_rounds(sessions_fd, round_names(sessions_fd, session), facts, before_ns, look, reuse)


@contextmanager
def opened_sessions(root: Path, change: str) -> Iterator[tuple[ChangeFacts, int | None]]:
    """The change's facts and a handle on its ``sessions`` folder: None when the change is not
    active or has no rounds."""
    with locate_change(root, change) as (facts, change_fd), ExitStack() as stack:
        yield facts, (try_open(stack, change_fd, (SESSIONS,)) if facts.location == "active" else None)


def sight_rounds(
    sessions_fd: int,
    rounds: list[str],
    facts: ChangeFacts,
    before_ns: int,
    look: Callable[[str, str, Sighting], _Seen | None],
    reuse: Reuse | None = None,
) -> Iterator[_Seen | tuple[str, str, TaskSnapshot]]:
    """``sight_change`` of the named rounds of the ``sessions`` folder open at ``sessions_fd``."""
    for name in rounds:
        yield from _sight_round(sessions_fd, name, facts, before_ns, look, reuse)


def _sight_round(
    sessions_fd: int,
    name: str,
    facts: ChangeFacts,
    before_ns: int,
    look: Callable[[str, str, Sighting], _Seen | None],
    reuse: Reuse | None,
) -> Iterator[_Seen | tuple[str, str, TaskSnapshot]]:
    round_fd = open_dir(sessions_fd, name)
    plain, session = name.isascii(), shown_name(name)
    try:
        entries = sorted(os.listdir(round_fd))
        counts = number_counts(entries)
        for task in entries:
            same = counts[task.split("-", 1)[0]]
            # A plain name is shown as it is: no escaping to try (``shown_name``), and it may be looked at.
            plain_task = task.isascii()
            at = (facts, session, task if plain_task else shown_name(task), same)
            if reuse is not None and (held := held_snapshot(round_fd, task, at, reuse)) is not None:
                yield session, at[2], held
                continue
            seen = _sight(round_fd, task, before_ns, facts) if plain and plain_task and same == 1 else None
            if seen is not None and (looked := look(name, task, seen)) is not None:
                yield looked
                continue
            for shown, tree in task_snapshots(round_fd, task, at):
                yield session, shown, tree
    finally:
        os.close(round_fd)


def _sight(round_fd: int, task: str, before_ns: int, facts: ChangeFacts) -> Sighting | None:
    try:
        fd = os.open(task, _DIR_FLAGS, dir_fd=round_fd)
    except OSError:
        return None
    try:
        folder = os.fstat(fd)
        if folder.st_ctime_ns >= before_ns:
            return None
        names = os.listdir(fd)
        if TASK_FILE not in names or (task_read := _read(fd, TASK_FILE, before_ns)) is None:
            return None
        # The probe a later walk compares by stat calls alone (``reader.held_snapshot``), in the
        # reader's order, from the very inodes read: a glance held on it is of exactly these files.
        infos = [folder, task_read[1]]
        report = report_info = release = None
        if REPORT_FILE in names:
            if (report_read := _read(fd, REPORT_FILE, before_ns)) is None:
                return None
            report, report_info = report_read
            infos.append(report_info)
        for name in (LOCATOR_FILE, RELEASE_FILE):
            if name in names:
                if (info := _settled(fd, name, before_ns)) is None:
                    return None
                infos.append(info)
                if name == RELEASE_FILE:
                    release = info.st_mtime
        return Sighting(
            names=names,
            task=task_read[0],
            task_mtime=task_read[1].st_mtime,
            report=report,
            report_mtime=None if report_info is None else report_info.st_mtime,
            release_mtime=release,
            has_locator=LOCATOR_FILE in names,
            facts=facts,
            probe=packed_probe(infos, names),
        )
    except OSError:
        return None
    finally:
        os.close(fd)


def _plain(info: os.stat_result, before_ns: int) -> bool:
    """A singly linked regular file within the size limit, settled before ``before_ns``."""
    return (
        stat.S_ISREG(info.st_mode)
        and info.st_nlink == 1
        and info.st_size <= MAX_FILE_BYTES
        and info.st_ctime_ns < before_ns
    )


def _read(dir_fd: int, name: str, before_ns: int) -> tuple[bytes, os.stat_result] | None:
    fd = os.open(name, _READ_FLAGS, dir_fd=dir_fd)
    try:
        info = os.fstat(fd)
        # No read lease here (``leases``): a glance is held only until the judging reads the task
        # again under one, and a lease on every file would cost a cold answer a sixth of its time.
        if not _plain(info, before_ns):
            return None
        # One read of one byte more than the file holds: a file whose size moved under it is not settled.
        data = os.read(fd, info.st_size + 1)
        return (data, info) if len(data) == info.st_size else None
    finally:
        os.close(fd)


def _settled(dir_fd: int, name: str, before_ns: int) -> os.stat_result | None:
    info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    return info if _plain(info, before_ns) else None

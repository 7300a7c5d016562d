"""Round and task directories for a new dispatch, under the state-root lock the store holds.

Rounds are opened at the UTC second with the smallest free ``-NN`` suffix; task numbers follow
the largest used in the round; a refused or failed dispatch leaves no empty directory behind. An
identical earlier request is found by its rendered TASK, so a retry needs no state file.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from contextlib import suppress
from datetime import datetime, timedelta

from handoff_core.contract.ids import is_round_id, next_round, round_base, round_time
from handoff_core.contract.snapshot import MISSING, Entry
from handoff_core.errors import HandoffError, InvalidContent
from handoff_core.files.entries import read_entry
from handoff_core.files.paths import open_dir
from handoff_core.files.publishing import repair_links
from handoff_core.layout import CLOSING_FILES, TASK_FILE

__all__ = ["find_retry", "newest_round", "open_round", "recent_rounds", "undo"]

RETRY_WINDOW = timedelta(minutes=10)


def open_round(sessions_fd: int, session: str | None, now: datetime) -> tuple[str, int, bool]:
    """``(round id, handle, newly made)``: the given round, or a new one opened ``now``."""
    if session is not None:
        try:
            return session, open_dir(sessions_fd, session), False
        except FileNotFoundError:
            raise InvalidContent(f"round {session} does not exist in this change; omit session to open one") from None
    name = next_round(round_base(now), os.listdir(sessions_fd))
    os.mkdir(name, 0o755, dir_fd=sessions_fd)
    os.fsync(sessions_fd)
    return name, open_dir(sessions_fd, name), True


def _round_order(name: str) -> tuple[str, int]:
    base, _, suffix = name.partition("-")
    return base, int(suffix or 0)


def newest_round(sessions_fd: int) -> str | None:
    """The change's newest round (its open one): the latest UTC id, then the largest suffix; None without one."""
    rounds = [name for name in os.listdir(sessions_fd) if is_round_id(name) and _is_dir(sessions_fd, name)]
    return max(rounds, key=_round_order, default=None)


def _is_dir(fd: int, name: str) -> bool:
    try:
        return stat.S_ISDIR(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def undo(sessions_fd: int, round_fd: int, new_round: str | None, task_id: str) -> None:
    """Remove the (empty) directories a refused or failed dispatch made."""
    for fd, name in ((round_fd, task_id), (sessions_fd, new_round)):
        if name:
            with suppress(OSError):
                os.rmdir(name, dir_fd=fd)


def recent_rounds(sessions_fd: int, now: datetime) -> list[str]:
    """Rounds opened within RETRY_WINDOW of ``now``, judged by their UTC id."""
    return [name for name in os.listdir(sessions_fd) if (opened := round_time(name)) and now - opened <= RETRY_WINDOW]


def _outstanding_task(round_fd: int, task: str) -> Entry:
    """The TASK.md of a task still waiting for its REPORT or RELEASE (a retry may return only those),
    with a link a crashed publish left repaired; MISSING for anything else."""
    try:
        fd = open_dir(round_fd, task)
    except (FileNotFoundError, NotADirectoryError, HandoffError):
        return MISSING
    try:
        names = os.listdir(fd)
        if TASK_FILE not in names or not set(CLOSING_FILES).isdisjoint(names):
            return MISSING
        repair_links(fd, TASK_FILE)
        return read_entry(fd, TASK_FILE)
    finally:
        os.close(fd)


def find_retry(
    sessions_fd: int, rounds: list[str], topic: str, expected: Callable[[str, str], bytes]
) -> tuple[str, str, bytes] | None:
    """``(round, task, TASK bytes)`` of an outstanding task whose TASK is exactly ``expected(round, task)``."""
    for session in rounds:
        try:
            round_fd = open_dir(sessions_fd, session)
        except (FileNotFoundError, NotADirectoryError):
            continue
        try:
            for task in sorted(n for n in os.listdir(round_fd) if n.split("-", 1)[-1] == topic):
                entry = _outstanding_task(round_fd, task)
                if entry.data is not None and entry.data == expected(session, task):
                    return session, task, entry.data
        finally:
            os.close(round_fd)
    return None

"""Which task a report token belongs to, found from the hash each TASK records.

The HTTP team server takes a task's report token as a bearer and must scope the session to that
task. Each TASK.md carries ``sha256`` of its token, so the index maps those hashes to refs. It
reads each task directory's TASK.md once (a TASK never changes) and looks only at task
directories it has not seen when a hash is unknown; a refused token therefore costs a directory
listing of the tree, never a re-read of its files.

A TASK's hash is read by the TASK parser (``task_identity``: ``parse_task`` without the scope
block), from the generated list of its Return section only, and only from a TASK whose own ids
are those of the directory holding it: a line quoted in a Goal, or a copy of another task's
TASK.md, never takes that task's place. A hash that two TASKs record anyway opens neither (which
one is seen first depends on directory order).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

from handoff_core.contract.ids import Ref, is_change_id, is_round_id, task_number
from handoff_core.contract.task import task_identity
from handoff_core.errors import HandoffError
from handoff_core.files.paths import walked
from handoff_core.files.reader import read_entry
from handoff_core.layout import CHANGES, SESSIONS, TASK_FILE
from handoff_core.services.tokens import token_check

__all__ = ["TokenIndex"]


def recorded_check(data: bytes, ref: Ref) -> str | None:
    """The token check of the TASK ``data``, when it reads as a TASK and is the one ``ref`` names."""
    try:
        task = task_identity(data.decode("utf-8").removeprefix("\ufeff"))
    except (HandoffError, UnicodeDecodeError):
        return None
    if (task.session, task.task) != (ref.session, ref.task) or task.change not in (None, ref.change):
        return None  # a copy of another task's TASK.md
    return task.token_check


class TokenIndex:
    def __init__(self, state_root: Path) -> None:
        self.state_root = state_root
        self._refs: dict[str, Ref] = {}
        self._doubled: set[str] = set()  # hashes two TASKs record: they open neither
        self._seen: set[tuple[str, str, str]] = set()
        self._lock = threading.Lock()

    def ref_of(self, token: str) -> Ref | None:
        """The task whose TASK records this token's hash, or None."""
        check = token_check(token.strip())
        with self._lock:
            if check not in self._refs:
                self._scan()
            return None if check in self._doubled else self._refs.get(check)

    def _scan(self) -> None:
        for change in self._names(CHANGES, is_change_id):
            for session in self._names((*CHANGES, change, SESSIONS), is_round_id):
                parts = (*CHANGES, change, SESSIONS, session)
                for task in self._names(parts, lambda name: task_number(name) is not None):
                    if (change, session, task) not in self._seen:
                        self._read(parts, Ref(change, session, task))

    def _names(self, parts: tuple[str, ...], valid: Callable[[str], bool]) -> list[str]:
        try:
            with walked(self.state_root, parts) as fd:
                return [name for name in os.listdir(fd) if valid(name)]
        except (OSError, HandoffError):
            return []

    def _read(self, parts: tuple[str, ...], ref: Ref) -> None:
        try:
            with walked(self.state_root, (*parts, ref.task)) as fd:
                entry = read_entry(fd, TASK_FILE)
        except (OSError, HandoffError):
            return
        if entry.data is None:
            return  # no TASK yet (or not a readable one): look again next time
        self._seen.add((ref.change, ref.session, ref.task))
        if (check := recorded_check(entry.data, ref)) is not None and self._refs.setdefault(check, ref) != ref:
            self._doubled.add(check)

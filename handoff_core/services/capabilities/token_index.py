"""Which task a report token belongs to, found from the hash each TASK records.

The HTTP team server takes a task's report token as a bearer and must scope the session to that
task. Each TASK.md carries ``sha256`` of its token, so the index maps those hashes to refs. It is
built once, by one walk of the tree; after that it follows the tree as it is told of changes
(``follow``, fed by the server's one watcher, and ``learn``, for a task this server has just
dispatched). Answering never touches the disk and takes no lock: a token the index does not know
is refused at the cost of one hash and one dictionary look-up, however many arrive and however
large the tree.

A TASK's hash is read by the TASK parser (``task_identity``: ``parse_task`` without the scope
block), from the generated list of its Return section only, and only from a TASK whose own ids
are those of the directory holding it: a line quoted in a Goal, or a copy of another task's
TASK.md, never takes that task's place. A hash that two TASKs record anyway opens neither (which
one is seen first depends on directory order).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from handoff_core.contract.ids import Ref, is_change_id, is_round_id, task_number
from handoff_core.contract.task_file import task_identity
from handoff_core.errors import HandoffError
from handoff_core.files.entries import read_entry
from handoff_core.files.paths import walked
from handoff_core.layout import CHANGES, SESSIONS, TASK_FILE, task_parts
from handoff_core.services.capabilities.tokens import token_check

__all__ = ["TokenIndex"]

# Depths below the state root: specdev/changes/<change>/sessions/<round>/<task>/<file>.
_CHANGE, _ROUND, _TASK = len(CHANGES) + 1, len(CHANGES) + 3, len(CHANGES) + 4
_Found = tuple[tuple[str, ...], Ref]  # a round's parts and a task in it


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
        self._lock = threading.Lock()  # for writers: a look-up reads one dict, safe without it
        self.built = False

    def ref_of(self, token: str) -> Ref | None:
        """The task whose TASK records this token's hash, or None (the index is built on first use)."""
        if not self.built:
            self.build()
        check = token_check(token.strip())
        return None if check in self._doubled else self._refs.get(check)

    def build(self) -> None:
        """Walk the tree and read every TASK.md not read yet (a TASK never changes): once at start,
        and again only when the watcher may have missed events."""
        with self._lock:
            self._read_all(self._tasks_under(CHANGES))
            self.built = True

    def learn(self, ref: Ref) -> None:
        """A task this server has just published, known before any watcher reports it."""
        with self._lock:
            self._read_all(self._tasks_under(task_parts(ref.change, ref.session, ref.task)))

    def follow(self, changed: Iterable[tuple[bool, Path]]) -> None:
        """Take in what the watcher saw: ``(gone, path)`` pairs; reads only tasks not yet known."""
        with self._lock:
            for gone, path in changed:
                try:
                    parts = path.relative_to(self.state_root).parts
                except ValueError:
                    continue
                if len(parts) < _CHANGE or parts[: len(CHANGES)] != CHANGES:
                    continue
                if gone:
                    self._forget(parts[:_TASK])
                else:
                    self._read_all(self._tasks_under(parts[:_TASK]))

    def _forget(self, prefix: tuple[str, ...]) -> None:
        """Drop the tasks below a path that is gone (and still gone: an event may be stale)."""
        if os.path.lexists(self.state_root.joinpath(*prefix)):
            return
        below = tuple(prefix[depth - 1] for depth in (_CHANGE, _ROUND, _TASK) if depth <= len(prefix))
        for check, ref in list(self._refs.items()):
            if (ref.change, ref.session, ref.task)[: len(below)] == below:
                del self._refs[check]
                self._seen.discard((ref.change, ref.session, ref.task))

    def _read_all(self, found: Iterable[_Found]) -> None:
        for parts, ref in found:
            if (ref.change, ref.session, ref.task) not in self._seen:
                self._read(parts, ref)

    def _tasks_under(self, prefix: tuple[str, ...]) -> Iterator[_Found]:
        """Every task below ``prefix`` (the changes folder, a change, a round or a task)."""
        if len(prefix) >= _TASK:
            change, sessions, session, task = prefix[len(CHANGES) : _TASK]
            if sessions == SESSIONS and is_change_id(change) and is_round_id(session) and task_number(task) is not None:
                yield prefix[:_ROUND], Ref(change, session, task)
            return
        if len(prefix) == _CHANGE + 1:  # the sessions folder itself
            prefix = prefix[:_CHANGE]
        if len(prefix) == _CHANGE - 1:
            for change in self._names(prefix, is_change_id):
                yield from self._tasks_under((*prefix, change))
        elif len(prefix) == _CHANGE:
            for session in self._names((*prefix, SESSIONS), is_round_id):
                yield from self._tasks_under((*prefix, SESSIONS, session))
        elif len(prefix) == _ROUND and prefix[_CHANGE] == SESSIONS:
            for task in self._names(prefix, lambda name: task_number(name) is not None):
                yield from self._tasks_under((*prefix, task))

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

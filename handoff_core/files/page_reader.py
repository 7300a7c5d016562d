"""``reader.read_snapshot`` for the tasks one answer judges: each change located once, each round listed once.

A page judges its tasks one by one, most of them in one or two rounds. Read one at a time, each
judgement located its change again (the state root opened, the archive listed, the README read),
opened its round and counted the whole round's numbers: about 200 µs a task before its own files.
Here those are taken once per answer, as the walk that made the answer took them once; each
task's own directory and files are still read afresh, exactly as ``read_snapshot`` reads them.
Anything the shared handles cannot settle (a change or round that cannot be opened, a walk
error) is left to ``read_snapshot`` itself, so every failure reads as it always has.
"""

from __future__ import annotations

import os
from collections import Counter
from contextlib import ExitStack

from handoff_core.contract.change import ChangeFacts
from handoff_core.contract.snapshot import TaskSnapshot
from handoff_core.errors import HandoffError
from handoff_core.files.change_dir import locate_change
from handoff_core.files.entries import exists_dir, try_open
from handoff_core.files.reader import found_snapshot, number_counts, read_snapshot, read_task_dir
from handoff_core.layout import SESSIONS

__all__ = ["PageReader"]

_Round = tuple[ChangeFacts, int, Counter[str]]  # the change's facts, the round's handle, its numbers' counts


class PageReader:
    """Snapshots of many tasks of one answer; its handles close when the ``with`` block ends."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self._root = root
        self._stack = ExitStack()
        self._changes: dict[str, tuple[ChangeFacts, int] | None] = {}
        self._rounds: dict[tuple[str, str], _Round | None] = {}

    def __enter__(self) -> PageReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def snapshot(self, change: str, session: str, task: str) -> TaskSnapshot:
        """What ``read_snapshot(root, change, session, task)`` gives, the change and round shared."""
        place = self._round(change, session)
        if place is None:
            return read_snapshot(self._root, change, session, task)
        facts, round_fd, counts = place
        try:
            read = read_task_dir(round_fd, task) if exists_dir(round_fd, task) else None
        except (HandoffError, OSError):
            return read_snapshot(self._root, change, session, task)
        same = counts[task.split("-", 1)[0]]
        if read is None:
            return TaskSnapshot(change=facts, problems=(), same_number=same, task_found=False)
        return found_snapshot(facts, same, read)

    def _round(self, change: str, session: str) -> _Round | None:
        """The round's shared handle and counts; None where ``read_snapshot`` must say what is wrong."""
        key = (change, session)
        if key not in self._rounds:
            self._rounds[key] = None
            located = self._change(change)
            if located is not None and located[0].location == "active":
                try:
                    round_fd = try_open(self._stack, located[1], (SESSIONS, session))
                    if round_fd is not None:
                        self._rounds[key] = (located[0], round_fd, number_counts(os.listdir(round_fd)))
                except (HandoffError, OSError):
                    pass  # left to read_snapshot, which says why
        return self._rounds[key]

    def _change(self, change: str) -> tuple[ChangeFacts, int] | None:
        if change not in self._changes:
            try:
                self._changes[change] = self._stack.enter_context(locate_change(self._root, change))
            except (HandoffError, OSError):
                self._changes[change] = None
        return self._changes[change]

"""``reader.read_snapshot`` for the tasks one answer judges: each round located and listed once.

A page judges its tasks one by one, most of them in one or two rounds. Read one at a time, each
judgement located its change again (the state root opened, the archive listed, the README read),
opened its round and counted the whole round's numbers: about 200 µs a task before its own files.
Here those are taken once per round per answer, as the walk that made the answer took them once
per change; each task's own directory and files are still read afresh, exactly as
``read_snapshot`` reads them. So within one answer a change moved or its README edited, a round
renamed or a task of the same number added after the page first read that round is seen at the
next answer, as it is by the walk. Only the round's handle is kept (never the change's or the
archive's), at most ``MAX_ROUNDS`` of them. Anything the shared handles cannot settle (a change or
round that cannot be opened, a walk error) is left to ``read_snapshot`` itself, so every failure
reads as it always has."""

from __future__ import annotations

import os
from collections import Counter
from contextlib import ExitStack, suppress
from typing import Final

from handoff_core.contract.change import ChangeFacts
from handoff_core.contract.snapshot import TaskSnapshot
from handoff_core.errors import HandoffError
from handoff_core.files.change_dir import locate_change
from handoff_core.files.entries import try_open
from handoff_core.files.reader import number_counts, read_snapshot, snapshot_in_round
from handoff_core.layout import SESSIONS

__all__ = ["PageReader"]

_Round = tuple[ChangeFacts, int, Counter[str]]  # the change's facts, the round's handle, its numbers' counts
MAX_ROUNDS: Final = 32  # round handles one reader holds at most (a page's tasks are mostly in one or two)


class PageReader:
    """Snapshots of many tasks of one answer; its handles close when the ``with`` block ends."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self._root = root
        self._stack = ExitStack()
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
        try:
            return snapshot_in_round(*place, task)
        except (HandoffError, OSError):
            return read_snapshot(self._root, change, session, task)

    def _round(self, change: str, session: str) -> _Round | None:
        """The round's shared handle and counts; None where ``read_snapshot`` must say what is wrong,
        or once ``MAX_ROUNDS`` are held (each task of further rounds is read on its own)."""
        key = (change, session)
        if key not in self._rounds:
            self._rounds[key] = None
            if len(self._rounds) <= MAX_ROUNDS:
                with suppress(HandoffError, OSError):  # else left to read_snapshot, which says why
                    self._rounds[key] = self._opened(change, session)
        return self._rounds[key]

    def _opened(self, change: str, session: str) -> _Round | None:
        """The round located as ``read_snapshot`` locates it; of what that opens, only the round's handle is kept."""
        with locate_change(self._root, change) as (facts, change_fd), ExitStack() as passing:
            if facts.location != "active" or (sessions := try_open(passing, change_fd, (SESSIONS,))) is None:
                return None
            round_fd = try_open(self._stack, sessions, (session,))
            return None if round_fd is None else (facts, round_fd, number_counts(os.listdir(round_fd)))

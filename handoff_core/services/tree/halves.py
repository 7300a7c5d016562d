"""A big cold walk in two processes: the later rounds of a change glanced by a child interpreter.

A cold answer spends most of its time in system calls and in the Python of each glance, and a
second thread would only contend for the GIL (measured slower). A second *process* runs beside
it: the server walks the first rounds while a child interpreter (``sys.executable -I``, the
server's own ``sys.path``) walks the rest through the very ``sessions`` handle the server opened
(passed by descriptor: no path is resolved again), glances them with the same code and sends
each glance back as plain data (``marshal``: values only, nothing that runs). The server holds
those glances as if it had taken them itself: each on the stamps of the files the child read.

A round the child cannot glance whole (a task that needs the full read) comes back as nothing and
is walked by the server; so does every round of a child that fails, sends what does not decode
into glances of the rounds asked, or is not done in time (it is killed). The answer is the
same either way, only slower. The child is always reaped before the walk returns.

It pays only for a large change: starting the child takes about as long as glancing
``HEAD_START`` tasks, so the server keeps that many more, and a change below ``SPLIT_FROM``
tasks (counted by its round directories' link counts, a stat each) is walked in one process.
"""

from __future__ import annotations

import logging
import marshal
import os
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

from handoff_core.contract.change import ChangeFacts
from handoff_core.files.interpreter import Child
from handoff_core.services.tree.glance_records import Glance, decoded

__all__ = ["Halves", "halves", "round_sizes", "split_at"]

logger = logging.getLogger(__name__)

SPLIT_FROM: Final = 4_000  # tasks below which starting a child costs more than it saves
HEAD_START: Final = 1_500  # tasks the server glances while a child starts (about 50 ms here)
WAIT_AT_LEAST: Final = 10.0  # seconds the server waits for its child after its own half, at the least
WAIT_FACTOR: Final = 4.0  # ... or this many times as long as its own half took, when that is longer
ENTRY: Final = ("handoff_core.services.tree.glance_records", "serve_half")  # what the child runs
_OWN_LINKS: Final = 2  # a directory's own name, and its "."
_STANDARD_STREAMS: Final = 2  # descriptors 0, 1 and 2


def round_sizes(sessions_fd: int, rounds: list[str]) -> list[int]:
    """Task directories per round, from each round directory's link count (0 where it says nothing)."""
    sizes = []
    for name in rounds:
        try:
            info = os.stat(name, dir_fd=sessions_fd, follow_symlinks=False)
        except OSError:
            info = None
        # A directory's link count is 2 + its subdirectories on the filesystems that keep it; 1 elsewhere.
        fits = info is not None and stat.S_ISDIR(info.st_mode) and info.st_nlink > _OWN_LINKS
        sizes.append(info.st_nlink - _OWN_LINKS if fits and info is not None else 0)
    return sizes


def split_at(sizes: list[int]) -> int:
    """How many leading rounds the server walks itself: ``len(sizes)`` when a child would not pay."""
    total = sum(sizes)
    if total < SPLIT_FROM:
        return len(sizes)
    walked = 0
    for index, size in enumerate(sizes):
        if walked >= (total + HEAD_START) / 2:
            return index
        walked += size
    return len(sizes)


@contextmanager
def halves(sessions_fd: int, facts: ChangeFacts, before_ns: int, rounds: list[str]) -> Iterator[Halves | None]:
    """A cold walk of ``rounds`` in halves, the child started; None: walk them all in this process."""
    # A handle numbered 0-2 would be taken by the child's own standard streams: no split then.
    cut = split_at(round_sizes(sessions_fd, rounds)) if sessions_fd > _STANDARD_STREAMS else len(rounds)
    split = None
    if cut < len(rounds):
        question = marshal.dumps((sessions_fd, tuple(facts), before_ns, rounds[cut:]))
        try:
            split = Halves(Child.start(ENTRY, question, (sessions_fd,)), rounds[:cut], rounds[cut:])
        except OSError as exc:
            logger.warning("walking every round here: cannot start a second process (%s)", exc)
    try:
        yield split
    finally:
        if split is not None:
            split.child.close()


class Halves:
    """The server's rounds (``here``) and a running child glancing the rest (``there``)."""

    def __init__(self, child: Child, here: list[str], there: list[str]) -> None:
        self.child = child
        self._began = time.monotonic()
        self.here, self.there = here, there

    def glances(self, change: str) -> Iterator[tuple[str, list[Glance] | None]]:
        """Each of the child's rounds with its glances, or None: walk that round here."""
        answer = self.child.answer(max(WAIT_AT_LEAST, WAIT_FACTOR * (time.monotonic() - self._began)))
        rounds = None
        try:
            rounds = decoded(answer, change, self.there) if answer is not None else None
        except (ValueError, TypeError, EOFError, OSError) as exc:
            self.child.failure = f"its answer does not decode ({exc})"
        if rounds is None:
            logger.warning("walking the second process's rounds here: %s", self.child.failure)
        yield from rounds if rounds is not None else ((name, None) for name in self.there)

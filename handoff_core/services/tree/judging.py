"""Judging in the background what a glancing answer left unjudged: one thread at a time, started
once no answer is being made, and pausing for the answers made meanwhile.

A Lead that asks again while the server judges never waits longer than the first time: every
answer is marked while it is made (``answering``), and the judging waits for those to end.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["PACE_EVERY", "PACE_SECONDS", "YIELD_SECONDS", "Judging"]

PACE_EVERY, PACE_SECONDS = 8, 0.0005  # background judging: ~1 ms of work, then the GIL is let go
YIELD_SECONDS = 1.0  # how long background judging waits at a time for the answers being made to end


class Judging:
    """The one background judging of a reader, and the answers it yields to."""

    def __init__(self) -> None:
        self._running: threading.Thread | None = None
        self._pending: threading.Thread | None = None  # the judging, until no answer is being made
        self._lock = threading.Lock()
        self._answers = 0  # answers being made now
        self._begun = self._ended = 0  # answers begun and ended so far
        self._pending_since = 0.0  # when the judging now pending was left for later (monotonic)
        self._changed = threading.Condition()

    @contextmanager
    def answering(self) -> Iterator[None]:
        """Mark an answer in the making: the background judging pauses until none is."""
        with self._changed:
            self._answers += 1
            self._begun += 1
        try:
            yield
        finally:
            with self._changed:
                self._answers -= 1
                self._ended += 1
                self._changed.notify_all()
            self._start_pending()

    def yield_to_answers(self) -> None:
        """Wait for the answers being made now to end; not for those begun meanwhile, so that answers
        that keep overlapping slow the judging down but never stop it."""
        with self._changed:
            begun = self._begun
            self._changed.wait_for(lambda: self._answers == 0 or self._ended >= begun, timeout=YIELD_SECONDS)

    def elsewhere(self) -> bool:
        """Whether a background judging runs (or waits to start) now, on another thread than this one."""
        running = self._running
        if self._pending is not None:
            return True
        return running is not None and running.is_alive() and running is not threading.current_thread()

    def later(self, judge: Callable[[], None]) -> None:
        """Run ``judge`` on a thread of its own once no answer is being made; nothing when a judging
        runs or waits already (it judges what this one would)."""
        with self._lock, self._changed:
            if self.elsewhere():
                return
            self._pending = threading.Thread(target=judge, name="handoff-judge", daemon=True)
            self._pending_since = time.monotonic()
        self._start_pending()

    def _start_pending(self) -> None:
        """Start the judging left pending, unless an answer is being made (the last one to end starts
        it) and it was left less than ``YIELD_SECONDS`` ago: answers that keep overlapping would
        otherwise never let it start."""
        with self._changed:
            if self._pending is None:
                return
            if self._answers and time.monotonic() - self._pending_since < YIELD_SECONDS:
                return
            self._running, self._pending = self._pending, None
            self._running.start()
            self._changed.notify_all()

    def wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the judging (started or pending); whether it is done."""
        deadline = time.monotonic() + timeout
        with self._changed:
            self._changed.wait_for(lambda: self._pending is None, timeout)
            running, pending = self._running, self._pending
        if running is not None:
            running.join(max(0.0, deadline - time.monotonic()))
        return pending is None and (running is None or not running.is_alive())

"""The clock a file's ctime is stamped with, and a bounded wait past its tick."""

from __future__ import annotations

import time

from handoff_core.services.tree.claim_rows import COARSE_CLOCK

__all__ = ["past_this_tick"]


def past_this_tick() -> None:
    """Wait (bounded) until the coarse clock that stamps a ctime is past the fine clock's now: what was
    changed so far is then older than any stamp a later change can get, a fine-grained ctime too (a
    kernel with multigrain timestamps stamps a file just stat'ed from the fine clock)."""
    now = time.clock_gettime_ns(time.CLOCK_REALTIME)
    deadline = time.monotonic() + 1.0
    while time.clock_gettime_ns(COARSE_CLOCK) <= now and time.monotonic() < deadline:
        time.sleep(0.001)
    assert time.clock_gettime_ns(COARSE_CLOCK) > now

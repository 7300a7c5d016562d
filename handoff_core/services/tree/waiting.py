"""Waiting for REPORTs: a light stat loop, bounded by a short timeout (clients time out near 60 s)."""

from __future__ import annotations

import time
from dataclasses import dataclass

import anyio

from handoff_core.contract.ids import Ref
from handoff_core.errors import InvalidInput

TYPE_CHECKING = False
if TYPE_CHECKING:
    from handoff_core.services.tree.queries import Queries

__all__ = ["MAX_REFS", "MAX_TIMEOUT", "Arrival", "WaitResult", "wait_for_reports"]

MAX_TIMEOUT = 50.0
MAX_REFS = 50
POLL_SECONDS = 0.1


@dataclass(frozen=True)
class Arrival:
    ref: Ref
    file: str  # one of CLOSING_FILES


@dataclass(frozen=True)
class WaitResult:
    arrived: tuple[Arrival, ...]
    pending: tuple[Ref, ...]
    timed_out: bool
    waited_seconds: float


def _check(refs: list[Ref], timeout: float) -> None:
    if not refs or len(refs) > MAX_REFS:
        raise InvalidInput(f"give between 1 and {MAX_REFS} refs to wait for")
    if not 0 < timeout <= MAX_TIMEOUT:
        raise InvalidInput(f"timeout_s must be above 0 and at most {MAX_TIMEOUT:g}; call again to keep waiting")


def _known(queries: Queries, refs: list[Ref]) -> None:
    for ref in refs:
        queries.read_task(ref)  # an unknown task is an error now, not a silent wait


async def wait_for_reports(queries: Queries, refs: list[Ref], timeout: float = 30.0) -> WaitResult:
    """Return as soon as any listed task has a REPORT or RELEASE, or when ``timeout`` runs out."""
    _check(refs, timeout)
    # File reads run in a worker thread: the event loop keeps serving other calls meanwhile.
    await anyio.to_thread.run_sync(_known, queries, refs)
    start = time.monotonic()
    deadline = start + timeout
    while True:
        found = await anyio.to_thread.run_sync(queries.arrivals, refs)
        now = time.monotonic()
        if found or now >= deadline:
            arrived = tuple(Arrival(ref, name) for ref, name in found.items())
            pending = tuple(ref for ref in refs if ref not in found)
            return WaitResult(arrived, pending, not found, round(now - start, 3))
        await anyio.sleep(min(POLL_SECONDS, deadline - now))

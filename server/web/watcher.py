"""The one watcher of the tree: one recursive watch of the state root, whose batches feed every
listener (the board's model, the arrivals, the token index) in turn.

A recursive inotify watch costs one kernel watch per directory, and the per-user limit is shared
by every process of that user: two watchers over a 96k-directory tree took it all. So a team
server holds exactly one, and when the kernel has no watches left it polls the tree instead
(``watchfiles``' polling backend), says so in the log and in ``handoff_status``, and keeps
serving: slower to notice, never a failed start.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

import anyio
from anyio.abc import TaskStatus

from server.web.board_model import BoardModel, ref_of_path

__all__ = ["POLL_MS", "Batch", "Changes", "TreeWatcher", "watch_board"]

logger = logging.getLogger(__name__)

Batch = set[tuple[Any, str]]  # watchfiles' (Change, path) pairs
WATCH: dict[str, Any] = {"debounce": 200, "step": 20, "yield_on_timeout": True, "rust_timeout": 100}
POLL_MS = 500  # between two walks of the tree, when events are polled


class Listener(Protocol):
    async def __call__(self, batch: Batch, whole: bool) -> None:
        """Take in a batch; ``whole`` when anything in the tree may have changed unseen."""


class Changes:
    """The board's version counter, as an event the SSE streams wait on."""

    def __init__(self) -> None:
        self._event = anyio.Event()

    def bump(self) -> None:
        self._event.set()
        self._event = anyio.Event()

    async def wait(self) -> None:
        await self._event.wait()


class BoardFeed:
    """Re-judge each task a batch touches (all of them when ``whole``), then tell the open pages."""

    def __init__(self, model: BoardModel, changes: Changes) -> None:
        self.model, self.changes = model, changes

    async def __call__(self, batch: Batch, whole: bool) -> None:
        root = self.model.queries.roots.state_root
        if whole:
            await anyio.to_thread.run_sync(self.model.load)
        elif refs := {ref for _, path in batch if (ref := ref_of_path(root, Path(path))) is not None}:
            await anyio.to_thread.run_sync(self.model.refresh, refs)
        else:
            return
        self.changes.bump()


class TreeWatcher:
    """One watch of ``root`` for all ``listeners``; ``polled`` says why events are polled, when they are.

    ``watch`` is ``watchfiles.awatch`` (a parameter so that a test can make the kernel's watches
    run out at start).
    """

    def __init__(
        self, root: Path, listeners: Sequence[Listener], *, watch: Callable[..., AsyncIterator[Batch]] | None = None
    ) -> None:
        self.root, self.listeners = root, list(listeners)
        self._watch = watch
        self.polled: str | None = None
        self._started = False

    def events(self) -> str:
        """What ``handoff_status`` says of the watch: nothing while the kernel reports events."""
        return f"polled: {self.polled}" if self.polled else ""

    async def run(self, stop: anyio.Event, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Feed the listeners until ``stop``.

        Start it with ``group.start``: it reports started once its watches are in place and every
        listener has taken in the whole tree behind them, so nothing written after that is missed.
        A new directory (a round, a task) is a whole batch: files written into it before its own
        watch was added raise no event.
        """
        while True:
            try:
                await self._feed(stop, task_status)
                return
            except FileNotFoundError:
                raise
            except OSError as exc:  # the kernel's watches ran out (at start or on a new directory)
                if self.polled is not None:
                    raise
                self.polled = f"the tree is walked every {POLL_MS} ms ({exc})"
                logger.warning("cannot watch %s (%s); polling it every %d ms instead", self.root, exc, POLL_MS)

    async def _feed(self, stop: anyio.Event, task_status: TaskStatus[None]) -> None:
        from watchfiles import Change, awatch

        watch: Callable[..., AsyncIterator[Batch]] = self._watch or awatch
        polling = self.polled is not None
        ready = False
        async for batch in watch(self.root, stop_event=stop, force_polling=polling, poll_delay_ms=POLL_MS, **WATCH):
            whole = not ready or any(kind == Change.added and Path(path).is_dir() for kind, path in batch)
            if not batch and not whole:
                continue
            for listener in self.listeners:
                await listener(batch, whole)
            if not ready:
                ready = True
                if not self._started:
                    self._started = True
                    task_status.started()


async def watch_board(
    model: BoardModel,
    changes: Changes,
    stop: anyio.Event,
    *,
    task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    **options: Any,
) -> None:
    """The board alone on the watcher (``handoff-mcp board``); see ``TreeWatcher.run``."""
    await TreeWatcher(model.queries.roots.state_root, [BoardFeed(model, changes)], **options).run(
        stop, task_status=task_status
    )

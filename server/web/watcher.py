"""The one watcher of the tree: file events re-judge the board's tasks and announce arrivals."""

from __future__ import annotations

from pathlib import Path

import anyio
from anyio.abc import TaskStatus

from server.web.board_model import BoardModel, ref_of_path

__all__ = ["Changes", "watch_board"]


class Changes:
    """The board's version counter, as an event the SSE streams wait on."""

    def __init__(self) -> None:
        self._event = anyio.Event()

    def bump(self) -> None:
        self._event.set()
        self._event = anyio.Event()

    async def wait(self) -> None:
        await self._event.wait()


async def watch_board(
    model: BoardModel, changes: Changes, stop: anyio.Event, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED
) -> None:
    """Re-judge each task a file event touches, then tell the open pages.

    Start it with ``group.start``: it reports started once its watches are in place and the tree
    has been judged again behind them, so nothing written after that is missed. A new directory
    (a round, a task) re-judges the whole tree: files written into it before its own watch was
    added raise no event. Held verdicts keep that cheap.
    """
    from watchfiles import Change, awatch

    root = model.queries.roots.state_root
    ready = False
    # Yielding on a quiet timeout is how the first pass learns the watches are in place.
    batches = awatch(root, stop_event=stop, debounce=200, step=20, yield_on_timeout=True, rust_timeout=100)
    async for batch in batches:
        if not ready or any(kind == Change.added and Path(path).is_dir() for kind, path in batch):
            await anyio.to_thread.run_sync(model.load)
        elif refs := {ref for _, path in batch if (ref := ref_of_path(root, Path(path))) is not None}:
            await anyio.to_thread.run_sync(model.refresh, refs)
        else:
            continue
        if not ready:
            ready = True
            task_status.started()
        changes.bump()

"""create_task throughput with 1, 2, 4 and 8 processes dispatching into one round."""

from __future__ import annotations

import multiprocessing
import threading
import time
from pathlib import Path

from bench.latency import _request
from bench.trees import make_change
from handoff_core.services.writing.store import Store


def _worker(
    state_root: str, change: str, session: str, worker: int, count: int, barrier: threading.Barrier
) -> tuple[float, float]:
    store = Store(Path(state_root))
    barrier.wait(timeout=120)
    start = time.time()
    for index in range(count):
        store.create_task(_request(change, worker * 10_000 + index, session))
    return start, time.time()


def run(workdir: Path, processes: list[int], per_process: int) -> dict[str, object]:
    context = multiprocessing.get_context("spawn")
    result: dict[str, object] = {}
    for count in processes:
        state_root = workdir / f"contention-{count}"
        change = f"2026-11-30-contention-{count}"
        make_change(state_root, change)
        session = Store(state_root).create_task(_request(change, -1, None)).ref.session
        barrier = context.Manager().Barrier(count)
        with context.Pool(count) as pool:
            spans = pool.starmap(
                _worker, [(str(state_root), change, session, w, per_process, barrier) for w in range(count)]
            )
        wall = max(end for _, end in spans) - min(start for start, _ in spans)
        tasks = count * per_process
        result[str(count)] = {"tasks": tasks, "seconds": round(wall, 3), "tasks_per_second": round(tasks / wall, 1)}
    return result

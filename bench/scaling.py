"""How status, dispatch and whole-tree validation grow with the tree: time and peak RSS.

``status`` is a fresh process's first answer (cold); ``status_warm`` a server that has answered
once, alternated in one process with the floor: a bare walk (open, list, lstat) of the same tree.
``dispatch`` is ``bench.dispatch`` on the same tree.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from bench import dispatch
from bench.stats import child_runs, timed
from bench.trees import CHANGE, kept_tree
from handoff_core.contract.ids import Ref
from handoff_core.services.tree.verdicts import SETTLE_SECONDS
from handoff_core.services.writing.store import Store


def _walk(state_root: Path, each_task: Callable[[int], int]) -> int:
    """Every task directory of the tree opened by handle; ``each_task`` does a floor's work in one."""
    found = 0
    for sessions in state_root.glob("specdev/changes/*/sessions"):
        with os.scandir(sessions) as rounds:
            for round_entry in rounds:
                round_fd = os.open(round_entry.path, os.O_RDONLY | os.O_DIRECTORY)
                for task in os.listdir(round_fd):
                    fd = os.open(task, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=round_fd)
                    found += each_task(fd)
                    os.close(fd)
                os.close(round_fd)
    return found


def _named(fd: int) -> int:
    return sum(1 for name in os.listdir(fd) if os.stat(name, dir_fd=fd, follow_symlinks=False))


def _read(fd: int) -> int:
    found = 0
    for name in os.listdir(fd):
        file_fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=fd)
        found += len(os.read(file_fd, os.fstat(file_fd).st_size + 1))
        os.close(file_fd)
    return found


def bare_walk(state_root: Path) -> int:
    """The floor under a warm status: every task directory opened and listed, every entry lstat'ed."""
    return _walk(state_root, _named)


def read_walk(state_root: Path) -> int:
    """The floor under a cold status: the bare walk, and every handoff file opened and read once."""
    return _walk(state_root, _read)


VALIDATE_UP_TO = 10_000  # validating every task one by one is a per-task figure: larger trees add nothing


def warm_child(state_root: Path, rounds: int = 7) -> None:
    store = Store(state_root)
    count = len(store.queries.status())
    warm, floor = [], []
    for _ in range(rounds):  # alternated, so drift on the shared disk touches both alike
        floor.append(timed(lambda: bare_walk(state_root)))
        warm.append(timed(store.queries.status))
    figures = {"seconds": statistics.median(warm), "floor_seconds": statistics.median(floor), "count": count}
    print(json.dumps({**figures, "held": store.queries.held_verdicts, "peak_rss_mb": round(peak_rss_kb() / 1024, 1)}))


def child(state_root: str, what: str) -> None:
    """Run one measurement and print its figures (called as ``python -m bench.scaling``)."""
    if what == "status_warm":
        warm_child(Path(state_root))
        return
    store = Store(Path(state_root))
    start = time.perf_counter()
    if what == "status":
        count = len(store.queries.status())
    else:
        refs = [t.ref for t in store.queries.status(CHANGE)] if what == "validate" else []
        start = time.perf_counter()
        count = sum(1 for ref in refs if store.queries.validate(Ref(*str(ref).split("/")), _stage(store, ref)).ok)
    seconds = time.perf_counter() - start
    print(json.dumps({"seconds": seconds, "peak_rss_mb": round(peak_rss_kb() / 1024, 1), "count": count}))


def peak_rss_kb() -> int:
    """This process's own high-water mark. (ru_maxrss survives exec on Linux: it would report the parent's.)"""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _stage(store: Store, ref: Ref) -> str:
    return "return" if (store.roots.task_dir(ref) / "REPORT.md").exists() else "dispatch"


def measure(state_root: Path, what: str, repeats: int) -> dict[str, float | str]:
    runs = child_runs("bench.scaling", [str(state_root), what], repeats)
    figures: dict[str, float | str] = {
        "seconds_median": round(statistics.median(r["seconds"] for r in runs), 4),
        "seconds_min": round(min(r["seconds"] for r in runs), 4),
        "peak_rss_mb": max(r["peak_rss_mb"] for r in runs),
    }
    if what == "status_warm":
        figures["floor_seconds_median"] = round(statistics.median(r["floor_seconds"] for r in runs), 4)
        figures["held_of_tasks"] = f"{min(r['held'] for r in runs)}/{runs[0]['count']}"
    return figures


def run(
    workdir: Path, sizes: list[int], repeats: int, calls: int = 30, targets_only: bool = False
) -> dict[str, object]:
    """Each size's judgement, validation and dispatch; with ``targets_only``, the steady dispatch alone."""
    result: dict[str, object] = {}
    cold_medians: list[float] = []
    for size in sizes:
        state_root = kept_tree(size, workdir)
        if targets_only:
            result[str(size)] = {"dispatch": dispatch.run(state_root, workdir, 1, calls, archived=False)}
            continue
        written = time.monotonic()
        big = size > VALIDATE_UP_TO
        status = measure(state_root, "status", 1 if big else repeats)
        cold_medians.append(float(status["seconds_median"]))
        figures: dict[str, object] = {"status": status}
        if not big:
            figures["validate_all"] = measure(state_root, "validate", repeats)
        # A verdict is held once its files are older than the settle time: a server's usual case.
        time.sleep(max(0.0, SETTLE_SECONDS + 0.1 - (time.monotonic() - written)))
        figures["status_warm"] = measure(state_root, "status_warm", repeats)
        figures["dispatch"] = dispatch.run(state_root, workdir, repeats, calls)
        result[str(size)] = figures
    if cold_medians:
        first, last = cold_medians[0], cold_medians[-1]
        result[f"growth_status_{sizes[0]}_to_{sizes[-1]}"] = round(last / first, 2)
    return result


if __name__ == "__main__":
    child(*sys.argv[1:])

"""How status and whole-tree validation grow with the tree: time and peak RSS, each in a fresh process."""

from __future__ import annotations

import json
import resource
import statistics
import sys
import time
from pathlib import Path

from bench.stats import child_runs
from bench.trees import CHANGE, generate
from handoff_core.contract.ids import Ref
from handoff_core.services.store import Store


def child(state_root: str, what: str) -> None:
    """Run one measurement and print its figures (called as ``python -m bench.scaling``)."""
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


def measure(state_root: Path, what: str, repeats: int) -> dict[str, float]:
    runs = child_runs("bench.scaling", [str(state_root), what], repeats)
    return {
        "seconds_median": round(statistics.median(r["seconds"] for r in runs), 4),
        "seconds_min": round(min(r["seconds"] for r in runs), 4),
        "peak_rss_mb": max(r["peak_rss_mb"] for r in runs),
    }


def run(workdir: Path, sizes: list[int], repeats: int) -> dict[str, object]:
    result: dict[str, object] = {}
    for size in sizes:
        state_root = workdir / f"tree-{size}"
        generate(state_root, size)
        result[str(size)] = {
            "status": measure(state_root, "status", repeats),
            "validate_all": measure(state_root, "validate", repeats),
        }
    for what in ("status", "validate_all"):
        first, last = (result[str(s)][what]["seconds_median"] for s in (sizes[0], sizes[-1]))  # type: ignore[index]
        result[f"growth_{what}_{sizes[0]}_to_{sizes[-1]}"] = round(last / first, 2)
    return result


if __name__ == "__main__":
    child(sys.argv[1], sys.argv[2])

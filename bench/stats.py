"""Small statistics helpers shared by the benchmark sections."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def summary(values: list[float]) -> dict[str, float]:
    """Milliseconds: min, p50, p95, max."""
    return {
        "n": len(values),
        "min_ms": round(min(values) * 1000, 3),
        "p50_ms": round(statistics.median(values) * 1000, 3),
        "p95_ms": round(percentile(values, 0.95) * 1000, 3),
        "max_ms": round(max(values) * 1000, 3),
    }


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def child_runs(module: str, args: list[str], repeats: int, timeout: float = 600) -> list[dict[str, Any]]:
    """Run ``python -m module args`` ``repeats`` times, each in a fresh process; its JSON line each time."""
    runs = []
    for _ in range(repeats):
        out = subprocess.run(
            [sys.executable, "-m", module, *args],
            capture_output=True,
            text=True,
            check=True,
            timeout=timeout,
            cwd=Path(__file__).resolve().parents[1],
        )
        runs.append(json.loads(out.stdout))
    return runs

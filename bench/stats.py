"""Small statistics helpers shared by the benchmark sections."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


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

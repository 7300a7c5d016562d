"""Small statistics helpers shared by the benchmark sections."""

from __future__ import annotations

import json
import os
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
            check=False,
            timeout=timeout,
            cwd=Path(__file__).resolve().parents[1],
        )
        if out.returncode != 0:  # its own words, not only its exit status: a 100k run is not cheap to repeat
            raise FloorFailed(f"python -m {module} {' '.join(args)} exited {out.returncode}: {out.stderr[-2000:]}")
        runs.append(json.loads(out.stdout))
    return runs


class FloorFailed(RuntimeError):
    """A floor (or a subject) did not do its work: the bench stops rather than divide by a crash."""


def checked(command: list[str], returncode: int, expected: tuple[int, ...] = (0,)) -> None:
    """A process the bench timed must have run to its end: any other exit fails the bench, loudly."""
    if returncode not in expected:
        raise FloorFailed(f"{' '.join(command)} exited {returncode} (expected {expected}): its figure would be a lie")


def paired(subject: list[float], floor: list[float]) -> dict[str, float]:
    """Each round's subject over the same round's floor: the median ratio, and its spread across rounds."""
    ratios = sorted(s / f for s, f in zip(subject, floor, strict=True))
    return {
        "rounds": len(ratios),
        "p50": round(statistics.median(ratios), 3),
        "min": round(ratios[0], 3),
        "max": round(ratios[-1], 3),
    }


def added_ms(subject: list[float], floor: list[float]) -> dict[str, float]:
    """What ``subject`` adds to ``floor``, round by round (seconds in, milliseconds out): median and range."""
    added = [(s - f) * 1000 for s, f in zip(subject, floor, strict=True)]
    return {"p50": round(statistics.median(added), 3), "min": round(min(added), 3), "max": round(max(added), 3)}


def spread(ratio: dict[str, float]) -> str:
    """A paired ratio as printed: the median and the range the rounds spanned."""
    return f"{ratio['p50']:.2f}x (rounds {ratio['min']:.2f}-{ratio['max']:.2f})"


def load_average() -> list[float]:
    """The 1, 5 and 15-minute load averages: how busy the shared machine was around a section."""
    return [round(value, 2) for value in os.getloadavg()]

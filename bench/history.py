"""search_history on a generated 50 MB Claude Code log: time and peak RSS, in a fresh process."""

from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path

from bench.scaling import peak_rss_kb
from bench.stats import child_runs
from handoff_core.services.logs import log_search

SESSION = "0b1c6f8e-2a4d-4c1e-9f3a-7d5e2b8c1a90"
WORDS = [
    "the",
    "a",
    "test",
    "build",
    "parser",
    "module",
    "error",
    "fix",
    "run",
    "check",
    "value",
    "file",
    "line",
    "commit",
    "review",
    "update",
]


def generate(path: Path, megabytes: int, seed: int = 7) -> Path:
    """Records of about 1 KB; the searched phrase sits only in the last few, so the whole log is read."""
    rng = random.Random(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    target = megabytes * 1024 * 1024
    written = 0
    with path.open("w") as handle:
        index = 0
        while written < target:
            text = " ".join(rng.choice(WORDS) for _ in range(160))
            if target - written < 8 * 1024:
                text += " MigrationError: column missing in table users"
            record = {
                "sessionId": SESSION,
                "uuid": f"u-{index}",
                "type": "assistant",
                "timestamp": f"2026-11-30T04:{index // 3600 % 60:02d}:{index % 60:02d}.000Z",
                "message": {"role": "assistant", "content": [{"type": "text", "text": text}]},
            }
            line = json.dumps(record) + "\n"
            handle.write(line)
            written += len(line)
            index += 1
    return path


def child(path: str) -> None:
    start = time.perf_counter()
    result = log_search.search(path, "migrationerror column missing", max_hits=5, context_chars=200)
    seconds = time.perf_counter() - start
    print(
        json.dumps(
            {
                "seconds": seconds,
                "peak_rss_mb": round(peak_rss_kb() / 1024, 1),
                "hits": len(result.hits),
                "lines": result.lines_read,
            }
        )
    )


def run(workdir: Path, megabytes: int, repeats: int) -> dict[str, object]:
    log = generate(workdir / "history" / f"{SESSION}.jsonl", megabytes)
    runs = child_runs("bench.history", [str(log)], repeats, timeout=300)
    best = min(runs, key=lambda r: r["seconds"])
    return {
        "log_mb": round(log.stat().st_size / 1024 / 1024, 1),
        "seconds_min": round(best["seconds"], 3),
        "seconds_max": round(max(r["seconds"] for r in runs), 3),
        "peak_rss_mb": max(r["peak_rss_mb"] for r in runs),
        "hits": best["hits"],
        "lines": best["lines"],
    }


if __name__ == "__main__":
    child(sys.argv[1])

"""``handoff_status`` of a Lead's server, cold, from the disk cache and warm, beside two floors.

Each figure is the tool's answer (the default view) as the server makes it: the tool, its output
checked and serialised, with no client around it (a client's own schema check of the result is
its cost, not the server's). In a fresh process: ``cold`` a new server with no disk cache (a new
container, another HOME); ``cached`` a new server that finds the cache an earlier one left;
``warm`` a server that has answered before and judged everything it glanced at. The floors, from
the same run: a bare walk naming every entry (open, list, lstat), and a walk that also reads every
handoff file once. Trees are settled (older than the verdicts' settle time), as a server's usually are.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult

from bench.scaling import bare_walk, peak_rss_kb, read_walk
from bench.stats import child_runs, paired, timed
from bench.trees import kept_tree
from handoff_core.services.tree.verdicts import SETTLE_SECONDS
from server.config import Settings
from server.mcp.app import build_server

FLOORS = {"bare": bare_walk, "read": read_walk}
JUDGED_WITHIN = 1800.0  # seconds a warm child waits for its server to judge what it glanced at


async def _call(server: MCPServer) -> tuple[float, dict[str, Any], int]:
    """One answer as the server makes it (the tool, its output checked and serialised), no client."""
    start = time.perf_counter()
    result = await server.call_tool("handoff_status", {})
    seconds = time.perf_counter() - start
    assert isinstance(result, CallToolResult)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return seconds, result.structured_content, len(result.content[0].text.encode())  # type: ignore[union-attr]


def _settings(state_root: Path, cache_dir: str) -> Settings:
    cache = Path(cache_dir) if cache_dir else None
    return Settings(
        role="lead",
        project_root=state_root.parent,
        state_root=state_root,
        secret_file=state_root.parent / "secret",
        cache_dir=cache,
    )


async def first_answer(state_root: Path, cache_dir: str) -> dict[str, Any]:
    seconds, answer, size = await _call(build_server(_settings(state_root, cache_dir)))
    return {"seconds": seconds, "bytes": size, "unjudged": answer["unjudged"], "counts": answer["counts"]}


async def warm_answers(state_root: Path, rounds: int = 7) -> dict[str, Any]:
    """Warm answers alternated with both floors, once the server has judged all it glanced at."""
    server = build_server(_settings(state_root, ""))
    deadline = time.monotonic() + JUDGED_WITHIN
    while (await _call(server))[1]["unjudged"] and time.monotonic() < deadline:
        await asyncio.sleep(0.5)  # the server judges on a thread of its own meanwhile
    times: dict[str, list[float]] = {"seconds": [], "bare": [], "read": []}
    for _ in range(rounds):  # alternated, so drift on the shared disk touches all alike
        times["bare"].append(timed(lambda: bare_walk(state_root)))
        times["read"].append(timed(lambda: read_walk(state_root)))
        seconds, answer, size = await _call(server)
        times["seconds"].append(seconds)
    medians = {name: statistics.median(values) for name, values in times.items()}
    ratios = {f"{name}_ratio": paired(times["seconds"], times[name]) for name in FLOORS}
    return {**medians, **ratios, "bytes": size, "unjudged": answer["unjudged"], "counts": answer["counts"]}


def child(state_root: str, what: str, cache_dir: str = "") -> None:
    """One measurement, printed as a JSON line (called as ``python -m bench.status``)."""
    root = Path(state_root)
    if what in FLOORS:
        figures: dict[str, Any] = {"seconds": timed(lambda: FLOORS[what](root))}
    elif what == "fill":  # an earlier server that judged everything and left its disk cache
        from handoff_core.services.writing.store import Store

        store = Store(root, cache_dir=Path(cache_dir))
        figures = {"count": len(store.queries.status()) + len(store.queries.claims())}
        store.queries.save_cache(force=True)
    elif what == "warm":
        figures = asyncio.run(warm_answers(root))
    else:
        figures = asyncio.run(first_answer(root, cache_dir))
    print(json.dumps({**figures, "peak_rss_mb": round(peak_rss_kb() / 1024, 1)}))


def _median(runs: list[dict[str, Any]], key: str) -> float:
    return round(float(statistics.median(r[key] for r in runs)), 4)


def _first(state_root: Path, what: str, repeats: int, cache_dir: str = "") -> dict[str, Any]:
    """``what`` in fresh processes, each run beside both floors in fresh processes too."""
    runs: dict[str, list[dict[str, Any]]] = {"answer": [], "bare": [], "read": []}
    for _ in range(repeats):
        for name in ("bare", "read"):
            runs[name] += child_runs("bench.status", [str(state_root), name], 1)
        runs["answer"] += child_runs("bench.status", [str(state_root), what, cache_dir], 1, timeout=3600)
    answer = runs["answer"][-1]
    seconds = [r["seconds"] for r in runs["answer"]]
    return {
        **{f"{name}_ratio": paired(seconds, [r["seconds"] for r in runs[name]]) for name in FLOORS},
        "seconds": _median(runs["answer"], "seconds"),
        "bare_seconds": _median(runs["bare"], "seconds"),
        "read_seconds": _median(runs["read"], "seconds"),
        "bytes": answer["bytes"],
        "unjudged": answer["unjudged"],
        "counts": answer["counts"],
        "peak_rss_mb": max(r["peak_rss_mb"] for r in runs["answer"]),
    }


def run(workdir: Path, sizes: list[int], repeats: int) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for size in sizes:
        state_root = kept_tree(size, workdir)
        time.sleep(SETTLE_SECONDS + 0.1)  # settled, as a server's tree usually is: only those are glanced at
        cache_dir = workdir / f"status-cache-{size}"
        # Fresh processes on a shared machine vary: more runs where they are cheap.
        once = repeats if size > 10_000 else max(5, repeats)
        figures = {"cold": _first(state_root, "cold", once)}
        child_runs("bench.status", [str(state_root), "fill", str(cache_dir)], 1, timeout=3600)
        figures["cached"] = _first(state_root, "cached", once, str(cache_dir))
        warm = child_runs("bench.status", [str(state_root), "warm"], 1, timeout=3600)[0]
        figures["warm"] = {
            "seconds": round(warm["seconds"], 4),
            "bare_seconds": round(warm["bare"], 4),
            "read_seconds": round(warm["read"], 4),
            **{k: warm[k] for k in ("bytes", "unjudged", "counts", "peak_rss_mb", "bare_ratio", "read_ratio")},
        }
        result[str(size)] = figures
    return result


if __name__ == "__main__":
    child(*sys.argv[1:])

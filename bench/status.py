"""``handoff_status`` of a Lead's server, cold and warm, beside two floors, and its memory per task.

Each figure is the tool's answer (the default view) as the server makes it: the tool, its output
checked and serialised, with no client around it (a client's own schema check of the result is
its cost, not the server's). In a fresh process: ``cold`` a new server; ``warm`` a server that has
answered before and judged everything it glanced at. Over stdio: the first server ever on the tree
(an empty cache), then a server restarted on the tree it judged (its cache kept). The floors, from
the same run: a bare walk naming every entry (open, list, lstat), and a walk that also reads every
handoff file once. Trees are settled (older than the verdicts' settle time), as a server's usually are.

Memory per task is (the warm stdio server's peak RSS at N tasks - the peak of the same server on a
tree of no tasks, run in the same round) / N: the peak (VmHWM) over the server's whole life, first
answers, background judging and ``targets.MEMORY_AFTER_DISPATCHES`` implementation dispatches (each released) included,
never its resident size at the end.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult

from bench.scaling import bare_walk, peak_rss_kb, read_walk
from bench.stats import FloorFailed, child_runs, paired, timed
from bench.status_server import ask, cpu_seconds, peak_of, started, stopped
from bench.targets import GLANCE_UP_TO, MEMORY_AFTER_DISPATCHES
from bench.trees import kept_tree, make_change, secret_of
from handoff_core.services.tree.verdicts import SETTLE_SECONDS
from server.config import Settings
from server.mcp.app import build_server
from server.mcp.services import Services

FLOORS = {"bare": bare_walk, "read": read_walk}
GLANCE_MODES = ("glancing", "judging")  # a fresh server's first status walk, as shipped and judging every task
JUDGED_WITHIN = 1800.0  # seconds a warm child waits for its server to judge what it glanced at
DISPATCH_CHANGE = "2026-11-30-status-dispatch"  # made beside the tree's own change, removed after


async def _call(server: MCPServer) -> tuple[float, dict[str, Any], int]:
    """One answer as the server makes it (the tool, its output checked and serialised), no client."""
    start = time.perf_counter()
    result = await server.call_tool("handoff_status", {})
    seconds = time.perf_counter() - start
    assert isinstance(result, CallToolResult)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return seconds, result.structured_content, len(result.model_dump_json(by_alias=True, exclude_none=True))


def _settings(state_root: Path) -> Settings:
    return Settings(
        role="lead", project_root=state_root.parent, state_root=state_root, secret_file=secret_of(state_root)
    )


async def first_answer(state_root: Path) -> dict[str, Any]:
    seconds, answer, size = await _call(build_server(_settings(state_root)))
    return {"seconds": seconds, "bytes": size, "unjudged": answer["unjudged"], "counts": answer["counts"]}


def _pause(answered_in: float) -> float:
    """How long to leave the server judging before asking again: judging waits while an answer is made,
    so asking as soon as one ends would leave it a sliver of the time at 100,000 tasks."""
    return max(0.5, 4 * answered_in)


async def warm_answers(state_root: Path, rounds: int = 7) -> dict[str, Any]:
    """Warm answers alternated with both floors, once the server has judged all it glanced at."""
    server = build_server(_settings(state_root))
    deadline = time.monotonic() + JUDGED_WITHIN
    while (asked := await _call(server))[1]["unjudged"] and time.monotonic() < deadline:
        await asyncio.sleep(_pause(asked[0]))  # the server judges on a thread of its own meanwhile
    times: dict[str, list[float]] = {"seconds": [], "bare": [], "read": []}
    for _ in range(rounds):  # alternated, so drift on the shared disk touches all alike
        times["bare"].append(timed(lambda: bare_walk(state_root)))
        times["read"].append(timed(lambda: read_walk(state_root)))
        seconds, answer, size = await _call(server)
        times["seconds"].append(seconds)
    medians = {name: statistics.median(values) for name, values in times.items()}
    ratios = {f"{name}_ratio": paired(times["seconds"], times[name]) for name in FLOORS}
    return {**medians, **ratios, "bytes": size, "unjudged": answer["unjudged"], "counts": answer["counts"]}


def _judged(server: subprocess.Popen[bytes], ident: int) -> None:
    """Ask again, leaving the server time to judge between answers, until it has judged all it glanced at."""
    deadline = time.monotonic() + JUDGED_WITHIN
    while (asked := ask(server, ident))[1]["unjudged"] and time.monotonic() < deadline:
        ident += 1
        time.sleep(_pause(asked[0]))  # the server judges on a thread of its own meanwhile


def over_stdio(state_root: Path, rounds: int = 7) -> dict[str, Any]:
    """The first stdio server ever on this tree (an empty cache): its first three answers back to back
    (the Lead that asks twice), then warm ones; then a server restarted on the tree it judged."""
    cache = Path(tempfile.mkdtemp(prefix="handoff-bench-cache-"))
    try:
        server = started(state_root, cache)
        try:
            # This machine pages out file pages left idle a few seconds (DAMON): read every file just
            # before, as the floor's round did, so that call 1 and the floor start from the same cache.
            read_walk(state_root)
            cpu = cpu_seconds(server.pid)
            first = [ask(server, 10)]
            first_cpu = cpu_seconds(server.pid) - cpu  # its own and its reaped children's
            first += [ask(server, 10 + index) for index in (1, 2)]
            _judged(server, 20)
            times: dict[str, list[float]] = {"warm": [], "read": []}
            for index in range(rounds):
                times["read"].append(timed(lambda: read_walk(state_root)))
                seconds, answer, size = ask(server, 1000 + index)
                times["warm"].append(seconds)
            # Restarted on the tree this one judged, while it idles: before its dispatches, after which
            # the Lead's secret governs the tree and every task the generator wrote is judged again.
            restarted = _restarted(state_root, cache, rounds)
            dispatched(server, MEMORY_AFTER_DISPATCHES)
            peak = peak_of(server.pid)
        finally:
            stopped(server)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    return {
        "calls": [round(call[0], 4) for call in first],
        "call1_cpu": round(first_cpu, 3),
        "unjudged_first": first[0][1]["unjudged"],
        "bytes": first[0][2],
        "warm": statistics.median(times["warm"]),
        "warm_read_ratio": paired(times["warm"], times["read"]),
        "warm_unjudged": answer["unjudged"],
        "warm_bytes": size,
        "server_peak_rss_mb": peak,
        **restarted,
    }


def _restarted(state_root: Path, cache: Path, rounds: int) -> dict[str, Any]:
    """A server restarted on a tree the one before it judged (its cache kept): its first answer, and
    the median of its warm answers once it has judged everything."""
    server = started(state_root, cache)
    try:
        read_walk(state_root)  # the same page cache as the first server's call 1
        first, answer, _ = ask(server, 10)
        _judged(server, 20)
        warm = [ask(server, 1000 + index)[0] for index in range(rounds)]
    finally:
        stopped(server)
    return {
        "restarted_first": first,
        "restarted_unjudged": answer["unjudged"],
        "restarted_warm": statistics.median(warm),
    }


def dispatched(server: subprocess.Popen[bytes], count: int) -> None:
    """``count`` review tasks dispatched over stdio, then one implementation task, which reads every claim.

    The generated TASKs carry the anchor of this server's secret (``bench.trees``), as the Lead's server
    publishes them: once that secret governs the tree they verify, so the open reviews claim nothing and
    the implementation task is dispatched, as in a real tree.
    """
    task = {"change": DISPATCH_CHANGE, "goal": "Review it.", "inputs": "the diff", "acceptance": "findings"}
    for index in range(count):
        arguments = {**task, "topic": f"part-{index + 1}", "kind": "review", "read_only": ["src/**"]}
        ask(server, 5000 + index, "create_task", arguments)
    implementation = {**task, "topic": "writer", "kind": "implementation", "workspace": "current", "writable": ["s/**"]}
    try:
        ask(server, 4999, "create_task", implementation)
    except FloorFailed as exc:
        if "ownership_conflict" not in str(exc):
            raise


def _stdio(state_root: Path, empty: Path, size: int, repeats: int) -> dict[str, Any]:
    """Fresh stdio servers, each beside a read walk and an empty-tree server in fresh processes of the same round."""
    runs: dict[str, list[dict[str, Any]]] = {"answer": [], "read": [], "empty": []}
    rounds = 3 if size > 10_000 else 7  # warm answers per server: the 100k runs are long enough already
    for _ in range(repeats):
        read_walk(state_root)  # every file in the page cache just before the floor (and before call 1, below)
        runs["read"] += child_runs("bench.status", [str(state_root), "read"], 1)
        runs["empty"] += child_runs("bench.status", [str(empty), "stdio", "1"], 1, timeout=600)
        runs["answer"] += child_runs("bench.status", [str(state_root), "stdio", str(rounds)], 1, timeout=3600)
    read = [r["seconds"] for r in runs["read"]]
    last = runs["answer"][-1]
    calls = [statistics.median(r["calls"][index] for r in runs["answer"]) for index in range(3)]
    return {
        "read_seconds": round(statistics.median(read), 4),
        **{
            f"call{index + 1}": {
                "seconds": round(calls[index], 4),
                "read_ratio": paired([r["calls"][index] for r in runs["answer"]], read),
            }
            for index in range(3)
        },
        "call1_cpu_seconds": round(statistics.median(r["call1_cpu"] for r in runs["answer"]), 3),
        "restarted": _restarted_figures(runs["answer"]),
        "warm": {
            "seconds": round(statistics.median(r["warm"] for r in runs["answer"]), 4),
            "read_ratio": last["warm_read_ratio"],
        },
        **{k: last[k] for k in ("bytes", "warm_bytes", "unjudged_first", "warm_unjudged")},
        "memory": memory_per_task(runs["answer"], runs["empty"], size),
    }


def _restarted_figures(answer: list[dict[str, Any]]) -> dict[str, Any]:
    """Each round's restarted server's first answer over its own warm answers' median."""
    first, warm = [r["restarted_first"] for r in answer], [r["restarted_warm"] for r in answer]
    return {
        "seconds": round(statistics.median(first), 4),
        "warm_seconds": round(statistics.median(warm), 4),
        "warm_ratio": paired(first, warm),
        "unjudged": answer[-1]["restarted_unjudged"],
    }


def memory_per_task(answer: list[dict[str, Any]], empty: list[dict[str, Any]], size: int) -> dict[str, Any]:
    """Each round's (warm server's peak - empty-tree server's peak) / tasks, in KB: median and range."""
    peaks = [r["server_peak_rss_mb"] for r in answer]
    floors = [r["server_peak_rss_mb"] for r in empty]
    per_task = sorted((p - f) * 1024 / size for p, f in zip(peaks, floors, strict=True))
    return {
        "server_peak_rss_mb": statistics.median(peaks),
        "empty_server_peak_rss_mb": statistics.median(floors),
        "kb_per_task": {"rounds": len(per_task), "p50": round(statistics.median(per_task), 3)}
        | {"min": round(per_task[0], 3), "max": round(per_task[-1], 3)},
    }


def child(state_root: str, what: str, rounds: str = "7") -> None:
    """One measurement, printed as a JSON line (called as ``python -m bench.status``); ``rounds`` is
    the warm answers over stdio, or the cache folder of a glance mode's server."""
    root = Path(state_root)
    if what in FLOORS:
        figures: dict[str, Any] = {"seconds": timed(lambda: FLOORS[what](root))}
    elif what in GLANCE_MODES:
        os.environ["HANDOFF_CACHE_DIR"] = rounds  # an empty cache: no rows a server before it kept
        queries = Services(_settings(root)).queries  # a fresh server's, as its first status meets it
        figures = {"seconds": timed(lambda: queries.status(glancing=what == "glancing"))}
    elif what == "warm":
        figures = asyncio.run(warm_answers(root))
    elif what == "stdio":
        made = make_change(root, DISPATCH_CHANGE)
        try:
            figures = over_stdio(root, int(rounds))
        finally:
            shutil.rmtree(made)
    else:
        figures = asyncio.run(first_answer(root))
    print(json.dumps({**figures, "peak_rss_mb": round(peak_rss_kb() / 1024, 1)}))


def _median(runs: list[dict[str, Any]], key: str) -> float:
    return round(float(statistics.median(r[key] for r in runs)), 4)


def _first(state_root: Path, what: str, repeats: int) -> dict[str, Any]:
    """``what`` in fresh processes, each run beside both floors in fresh processes too."""
    runs: dict[str, list[dict[str, Any]]] = {"answer": [], "bare": [], "read": []}
    for _ in range(repeats):
        for name in ("bare", "read"):
            runs[name] += child_runs("bench.status", [str(state_root), name], 1)
        runs["answer"] += child_runs("bench.status", [str(state_root), what], 1, timeout=3600)
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


def _glance_gain(state_root: Path, repeats: int) -> dict[str, Any]:
    """What the cold glance (``files.sightings``) earns: a fresh server's first status walk judging every
    task over the same walk as shipped (glancing at settled tasks), alternated in fresh processes."""
    runs: dict[str, list[float]] = {mode: [] for mode in GLANCE_MODES}
    for _ in range(repeats):
        for mode in GLANCE_MODES:
            cache = tempfile.mkdtemp(prefix="handoff-bench-cache-")
            try:
                args = [str(state_root), mode, cache]
                runs[mode] += [r["seconds"] for r in child_runs("bench.status", args, 1, timeout=600)]
            finally:
                shutil.rmtree(cache, ignore_errors=True)
    return {
        "glancing_seconds": round(statistics.median(runs["glancing"]), 4),
        "judging_seconds": round(statistics.median(runs["judging"]), 4),
        "judging_over_glancing": paired(runs["judging"], runs["glancing"]),
    }


def run(workdir: Path, sizes: list[int], repeats: int, targets_only: bool = False) -> dict[str, Any]:
    """Each size's answers, and the memory of its warm stdio server above an empty-tree server's; with
    ``targets_only``, the stdio rows alone (what the targets read)."""
    empty = workdir / "status-empty" / "speculo" / ".speculo"
    make_change(empty)
    result: dict[str, Any] = {}
    for size in sizes:
        state_root = kept_tree(size, workdir)
        time.sleep(SETTLE_SECONDS + 0.1)  # settled, as a server's tree usually is: only those are glanced at
        # Fresh processes on a shared machine vary: more runs where they are cheap.
        once = repeats if size > 10_000 else max(5, repeats)
        stdio_rounds = once if size <= 10_000 else min(once, 2)
        glance = {"glance": _glance_gain(state_root, once)} if size <= GLANCE_UP_TO else {}
        if targets_only:
            result[str(size)] = {"stdio": _stdio(state_root, empty, size, stdio_rounds), **glance}
            continue
        figures = {"cold": _first(state_root, "cold", once), **glance}
        warm = child_runs("bench.status", [str(state_root), "warm"], 1, timeout=3600)[0]
        figures["warm"] = {
            "seconds": round(warm["seconds"], 4),
            "bare_seconds": round(warm["bare"], 4),
            "read_seconds": round(warm["read"], 4),
            **{k: warm[k] for k in ("bytes", "unjudged", "counts", "peak_rss_mb", "bare_ratio", "read_ratio")},
        }
        figures["stdio"] = _stdio(state_root, empty, size, stdio_rounds)
        result[str(size)] = figures
    return result


if __name__ == "__main__":
    child(*sys.argv[1:])

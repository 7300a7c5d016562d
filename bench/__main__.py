"""`python -m bench [--quick] [--json PATH] [--only SECTIONS]`: every figure in one run, printed and saved.

Sections: startup, latency, validator, scaling, contention, history, http, board, exchange,
evidence, tokens (schema size comes with startup).
Temporary directories only; fixed inputs; no network.
"""

from __future__ import annotations

import argparse
import asyncio
import compileall
import json
import os
import platform
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench import board, contention, evidence, exchange, history, http, latency, scaling, startup, tokens, validator
from bench.trees import CHANGE, make_change
from handoff_core.services.store import Store

FULL = {
    "startup_runs": 12,
    "calls": 500,
    "validator_runs": 30,
    "sizes": [100, 1000, 10000, 100000],
    "repeats": 3,
    "processes": [1, 2, 4, 8],
    "per_process": 40,
    "log_mb": 50,
    "http_calls": 200,
    "board_sizes": [100, 1000, 10000],
    "exchange": (5000, 20000),
    "evidence_runs": 30,
    "token_sizes": [3000, 30000],
    "token_calls": 200,
    "trickling": 1000,
}
QUICK = {
    "startup_runs": 3,
    "calls": 30,
    "validator_runs": 5,
    "sizes": [100, 1000],
    "repeats": 1,
    "processes": [1, 2],
    "per_process": 10,
    "log_mb": 5,
    "http_calls": 20,
    "board_sizes": [100],
    "exchange": (500, 2000),
    "evidence_runs": 3,
    "token_sizes": [300],
    "token_calls": 10,
    "trickling": 100,
}
SECTIONS = (
    "startup",
    "latency",
    "validator",
    "scaling",
    "contention",
    "history",
    "http",
    "board",
    "exchange",
    "evidence",
    "tokens",
)


def machine() -> dict[str, object]:
    return {
        "python": platform.python_version(),
        "executable": os.path.realpath(sys.executable),
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
    }


def _latency_project(work: Path, name: str) -> Path:
    """Each way of calling gets an identical, separate tree, so none pays for another's tasks."""
    project = work / f"latency-{name}"
    state_root = project / "speculo" / ".speculo"
    make_change(state_root, "2026-11-30-bench")
    latency.status_tree(state_root, "2026-11-30-status", 20)
    return project


def run_latency(work: Path, secret: Path, calls: int) -> dict[str, Any]:
    change, status = "2026-11-30-bench", "2026-11-30-status"
    project = _latency_project(work, "memory")
    memory = asyncio.run(latency.in_memory(project, secret, change, status, calls))
    project = _latency_project(work, "stdio")
    stdio = asyncio.run(latency.over_stdio(startup.commands(project, secret)["lead"], change, status, calls))
    project = _latency_project(work, "core")
    core = latency.core_latency(Store(project / "speculo" / ".speculo", project), change, status, calls)
    overhead = {name: round(memory[name]["p50_ms"] - core[name]["p50_ms"], 3) for name in core}
    check = memory.pop("client_output_check_handoff_status")
    return {
        "in_memory": memory,
        "stdio": stdio,
        "core": core,
        "mcp_overhead_p50_ms": overhead,
        "client_output_check_p50_ms": {"handoff_status": check["p50_ms"]},
    }


def run_validator(work: Path, secret: Path, runs: int) -> dict[str, object]:
    project = work / "validator"
    state_root = project / "speculo" / ".speculo"
    make_change(state_root)
    store = Store(state_root, project)
    created = store.create_task(latency._request(CHANGE, 1, None))
    store.write_report(latency._report(created.ref), CHANGE)
    ref = created.ref
    return validator.run(project, state_root, (ref.change, ref.session, ref.task), runs)


def collect(sections: list[str], sizes: dict[str, Any], work: Path) -> dict[str, Any]:
    secret = work / "secret"
    project = work / "project"
    make_change(project / "speculo" / ".speculo")
    results: dict[str, Any] = {"machine": machine(), "settings": sizes}
    if "startup" in sections:
        results["startup"] = startup.run(project, secret, sizes["startup_runs"])
    if "latency" in sections:
        results["latency"] = run_latency(work, secret, sizes["calls"])
    if "validator" in sections:
        results["validator"] = run_validator(work, secret, sizes["validator_runs"])
    if "scaling" in sections:
        results["scaling"] = scaling.run(work, sizes["sizes"], sizes["repeats"], min(sizes["calls"], 60))
    if "contention" in sections:
        results["contention"] = contention.run(work, sizes["processes"], sizes["per_process"])
    if "history" in sections:
        results["history"] = history.run(work, sizes["log_mb"], sizes["repeats"])
    if "exchange" in sections:
        files, entries = sizes["exchange"]
        results["exchange"] = exchange.run(work, files, entries, max(2, sizes["repeats"]))
    if "board" in sections:
        results["board"] = board.run(work, sizes["board_sizes"], max(3, sizes["repeats"]))
    if "evidence" in sections:
        results["evidence"] = evidence.run(work, sizes["evidence_runs"])
    if "http" in sections:
        results["http"] = http.run(work, [sys.executable, "-m", "server"], sizes["http_calls"])
    if "tokens" in sections:
        command = [sys.executable, "-m", "server"]
        results["tokens"] = tokens.run(work, command, sizes["token_sizes"], sizes["token_calls"], sizes["trickling"])
    return results


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small counts, for a smoke run")
    parser.add_argument("--json", type=Path, default=Path("bench/results/latest.json"))
    parser.add_argument("--only", default=",".join(SECTIONS), help="comma-separated sections")
    args = parser.parse_args()
    sections = [s for s in args.only.split(",") if s in SECTIONS]
    # Byte-compile the packages as an install does (pip compiles; an editable checkout under
    # PYTHONDONTWRITEBYTECODE never would): start-up figures are about running, not compiling.
    root = Path(__file__).resolve().parents[1]
    for package in ("handoff_core", "server"):
        compileall.compile_dir(root / package, quiet=1)
    with tempfile.TemporaryDirectory(prefix="handoff-bench-") as tmp:
        results = collect(sections, QUICK if args.quick else FULL, Path(tmp))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=2) + "\n")
    from bench.table import render

    print(render(results))
    print(f"\nJSON: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

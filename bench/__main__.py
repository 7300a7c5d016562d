"""`python -m bench [--quick] [--json PATH] [--only SECTIONS] [--status-sizes N,...]`: every figure in one run.

Sections: startup, latency, validator, status, scaling, contention, history, exchange, board,
evidence, remote, hooks, sandbox, verify, http, tokens (schema size comes with startup). Each section's rows are
printed, and the JSON saved whole, as soon as it finishes. Runs from a plain install: nothing here
needs the dev extras (the board is skipped without playwright). Temporary directories only; fixed
inputs; no network.
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import (
    board,
    contention,
    evidence,
    exchange,
    history,
    hooks,
    http,
    latency,
    remote,
    requests,
    sandbox,
    scaling,
    startup,
    status,
    targets,
    team_status,
    tokens,
    validator,
    verify,
)
from bench.stats import load_average
from bench.trees import make_change
from handoff_core.contract.proof import signing_key
from handoff_core.services.writing.store import Store

FULL = {
    "startup_runs": 12,
    "calls": 500,
    "validator_runs": 30,
    "sizes": [100, 1000, 10000, 100000],
    "status_sizes": [1000, 10000, 100000],
    "repeats": 3,
    "processes": [1, 2, 4, 8],
    "per_process": 40,
    "log_mb": 50,
    "http_calls": 200,
    "team_status_sizes": [100, 1000],
    "team_status_calls": 200,
    "board_sizes": [100, 1000, 10000],
    "exchange": (5000, 20000),
    "evidence_runs": 30,
    "hook_runs": 40,
    "sandbox_runs": 40,
    "verify_runs": 15,
    "token_sizes": [3000, 30000],
    "token_calls": 200,
    "trickling": 1000,
    "targets_only": False,  # --targets: only the rows the targets read
}
QUICK = {
    "startup_runs": 3,
    "calls": 30,
    "validator_runs": 5,
    "sizes": [100, 1000],
    "status_sizes": [300],
    "repeats": 1,
    "processes": [1, 2],
    "per_process": 10,
    "log_mb": 5,
    "http_calls": 20,
    "team_status_sizes": [100],
    "team_status_calls": 20,
    "board_sizes": [100],
    "exchange": (500, 2000),
    "evidence_runs": 3,
    "hook_runs": 5,
    "sandbox_runs": 5,
    "verify_runs": 3,
    "token_sizes": [300],
    "token_calls": 10,
    "trickling": 100,
    "targets_only": False,
}
SECTIONS = (
    "startup",
    "latency",
    "validator",
    "status",
    "scaling",
    "contention",
    "history",
    "exchange",
    "board",
    "evidence",
    "remote",
    "hooks",
    "sandbox",
    "verify",
    "http",
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


def run_http(work: Path, sizes: dict[str, Any]) -> dict[str, Any]:
    """HTTP beside stdio, fifty reports at once, then the team server's CPU per status call by clients."""
    command = [sys.executable, "-m", "server"]
    figures = http.run(work, command, sizes["http_calls"])
    rounds = max(3, sizes["repeats"])
    figures["status_clients"] = team_status.run(
        work, command, sizes["team_status_sizes"], sizes["team_status_calls"], rounds
    )
    return figures


def run_validator(work: Path, runs: int) -> dict[str, object]:
    """handoff-validate on the return stage of a review, an implementation task and a signed one."""
    project = work / "validator"
    state_root = project / "speculo" / ".speculo"
    make_change(state_root, requests.DEMO)
    store = Store(state_root, project)
    token = "bench-report-token-aaaaaaaaaaaa"
    built = {
        "review": requests.review(),
        "implementation": requests.implementation(),
        "implementation_signed": requests.implementation("implement-a2", signing_key=lambda _: signing_key(token)),
    }
    refs = {}
    for case, request in built.items():
        created = store.create_task(request)
        report = requests.report_of(
            created.ref, status="completed", focused=latency.FOCUS, artifacts="src/a1", verification="pytest passed"
        )
        store.write_report(report, requests.DEMO, token=token if case.endswith("signed") else None)
        refs[case] = (created.ref.change, created.ref.session, created.ref.task)
    return validator.run(work, project, state_root, refs, runs)


def _runners(sizes: dict[str, Any], work: Path) -> dict[str, Callable[[], object]]:
    """One call per section, in the order they run."""
    secret = work / "secret"
    project = work / "project"
    make_change(project / "speculo" / ".speculo")
    files, entries = sizes["exchange"]
    return {
        "startup": lambda: startup.run(project, secret, sizes["startup_runs"]),
        "latency": lambda: run_latency(work, secret, sizes["calls"]),
        "validator": lambda: run_validator(work, sizes["validator_runs"]),
        "status": lambda: status.run(work, sizes["status_sizes"], sizes["repeats"], sizes["targets_only"]),
        "scaling": lambda: scaling.run(
            work, sizes["sizes"], sizes["repeats"], min(sizes["calls"], 60), sizes["targets_only"]
        ),
        "contention": lambda: contention.run(work, sizes["processes"], sizes["per_process"]),
        "history": lambda: history.run(work, sizes["log_mb"], sizes["repeats"]),
        "exchange": lambda: exchange.run(work, files, entries, max(2, sizes["repeats"])),
        "board": lambda: board.run(work, sizes["board_sizes"], max(3, sizes["repeats"])),
        "evidence": lambda: evidence.run(work, sizes["evidence_runs"]),
        "remote": lambda: remote.run(work, [sys.executable, "-m", "server"], sizes["evidence_runs"]),
        "hooks": lambda: hooks.run(work, sizes["hook_runs"]),
        "sandbox": lambda: sandbox.run(work, sizes["sandbox_runs"]),
        "verify": lambda: verify.run(work, sizes["verify_runs"]),
        "http": lambda: run_http(work, sizes),
        "tokens": lambda: tokens.run(
            work, [sys.executable, "-m", "server"], sizes["token_sizes"], sizes["token_calls"], sizes["trickling"]
        ),
    }


def save(path: Path, results: dict[str, Any]) -> None:
    """The figures so far, whole: a crash in a later section loses none of the earlier ones."""
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temp.write_text(json.dumps(results, indent=2) + "\n")
    os.replace(temp, path)  # noqa: TID251 - a results file is rewritten on purpose; it is not a handoff file


def collect(sections: list[str], sizes: dict[str, Any], work: Path, out: Path) -> dict[str, Any]:
    """Run ``sections`` in order, saving ``out`` and printing each section's rows as it finishes."""
    from bench.table import render

    results: dict[str, Any] = {"machine": machine(), "settings": sizes}
    print(render(results), flush=True)  # the machine line; each section's rows follow as it finishes
    runners = _runners(sizes, work)
    for name in runners:
        if name in sections:
            before = load_average()
            results[name] = runners[name]()
            results.setdefault("load", {})[name] = {"before": before, "after": load_average()}
            save(out, results)
            section = {"machine": results["machine"], "load": results["load"], name: results[name]}
            print(render(section).split("\n", 2)[2], flush=True)
    found = targets.standings(results)
    results["targets"] = targets.as_json(found)
    save(out, results)
    print("[targets: each beside its floor, all from this run]", *targets.rows(found), sep="\n", flush=True)
    return results


def _sections(only: str) -> list[str]:
    sections = [s.strip() for s in only.split(",") if s.strip()]
    unknown = [s for s in sections if s not in SECTIONS]
    if unknown:
        raise SystemExit(f"unknown section {', '.join(unknown)}: pass some of {','.join(SECTIONS)}")
    return sections


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small counts, for a smoke run")
    parser.add_argument("--json", type=Path, default=Path("bench/results/latest.json"))
    parser.add_argument("--only", default=",".join(SECTIONS), help="comma-separated sections")
    parser.add_argument("--status-sizes", default="", help="comma-separated tree sizes of the status section")
    parser.add_argument("--targets", action="store_true", help="only the sections and sizes the targets need")
    args = parser.parse_args()
    sections = _sections(",".join(targets.SECTIONS) if args.targets else args.only)
    sizes = dict(QUICK if args.quick else FULL)
    if args.targets:
        sizes["targets_only"] = True
    if args.targets and not args.quick:
        sizes |= {"status_sizes": list(targets.STATUS_SIZES), "sizes": [targets.DISPATCH_SIZE]}
    if args.status_sizes:
        sizes["status_sizes"] = [int(size) for size in args.status_sizes.split(",")]
    # Byte-compile the packages as an install does (pip compiles; an editable checkout under
    # PYTHONDONTWRITEBYTECODE never would): start-up figures are about running, not compiling.
    root = Path(__file__).resolve().parents[1]
    for package in ("handoff_core", "server"):
        compileall.compile_dir(root / package, quiet=1)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="handoff-bench-") as tmp:
        results = collect(sections, sizes, Path(tmp), args.json)
    print(f"JSON: {args.json}")
    missed = targets.missed(targets.standings(results))
    if args.targets and missed:  # --targets checks them: a missed target fails the run, like a failed floor
        print(f"{len(missed)} target(s) missed: {'; '.join(missed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

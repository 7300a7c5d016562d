"""An executor on another machine: the guard asking the team server, and the audit fetching through the remote.

A team server (``handoff-mcp serve --http``) on loopback, a bare repository as the shared remote, and
a clone with its own cache directory. Alternated in each round: the guard's hook as printed (``handoff-mcp
guard --url``) when it must ask the team server (its cache emptied first), the same hook answered
from its cache, and the floor of an interpreter that does nothing; the same flags on the lean entry
(``python -I -S hook_process.py --url``), asking and cached, beside the minimal hook script
(``bench/minimal_hook.py``: ``python -I -S`` reading the event); then ``audit_task`` of the pushed
branch (one ``git fetch`` of the branch, then the judgement) beside the floor of that fetch plus a
``git diff`` of the same range.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio

from bench.evidence import GIT_ENV, based_project, git
from bench.http import _free_port, _session
from bench.stats import checked, paired, summary
from handoff_core.contract.ids import parse_ref
from handoff_core.services import evidence as evidence_package
from handoff_core.services.capabilities.tokens import lead_token, load_secret
from handoff_core.services.evidence.audit import audit_task
from handoff_core.services.writing.store import Store

__all__ = ["run"]

CHANGE = "2026-11-30-remote"
MINIMAL_HOOK = Path(__file__).resolve().parent / "minimal_hook.py"


def _repositories(work: Path) -> tuple[Path, Path, Path]:
    project, bare, clone = work / "remote-lead", work / "remote.git", work / "remote-elsewhere" / "clone"
    based_project(project, {f"src/a1/f{index}.py": f"x = {index}\n" for index in range(200)}, CHANGE)
    git(work, "init", "-q", "--bare", "-b", "main", str(bare))
    git(project, "remote", "add", "origin", str(bare))
    git(project, "push", "-q", "-u", "origin", "main")
    git(work, "clone", "-q", str(bare), str(clone))
    git(clone, "checkout", "-q", "-b", "task-remote")
    return project, bare, clone


async def _dispatch(base: str, secret: Path, project: Path) -> dict[str, Any]:
    args: dict[str, Any] = {
        "change": CHANGE,
        "topic": "remote",
        "kind": "implementation",
        "goal": "Change A1.",
        "inputs": "x",
    }
    args |= {"acceptance": "tests pass", "workspace": "required", "writable": ["src/a1/**"], "branch": "task-remote"}
    token = lead_token(load_secret(secret), project / "speculo" / ".speculo")
    async with _session(f"{base}/lead/mcp", token) as lead:
        result = await lead.call_tool("create_task", args)
    assert isinstance(result.structured_content, dict), result.content
    return result.structured_content


async def _served(command: list[str], project: Path, secret: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    serve = [*command, "serve", "--http", "--port", str(port), "--project-root", str(project)]
    team = subprocess.Popen([*serve, "--secret-file", str(secret)], stderr=subprocess.DEVNULL)
    with anyio.fail_after(30):
        while True:
            try:
                await anyio.connect_tcp("127.0.0.1", port)
                return team, f"http://127.0.0.1:{port}"
            except OSError:
                await anyio.sleep(0.02)


def _once(command: list[str], stdin: bytes, env: dict[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(command, input=stdin, capture_output=True, check=False, cwd=cwd, env=env, timeout=60)
    return time.perf_counter() - start


def _decision(command: list[str], stdin: bytes, env: dict[str, str], cwd: Path) -> str:
    """What a hook answers (allow, deny), or how it failed: a figure is only worth what it measured."""
    done = subprocess.run(command, input=stdin, capture_output=True, check=False, cwd=cwd, env=env, timeout=60)
    if done.returncode != 0 or not done.stdout:
        return f"exit {done.returncode}, {done.stdout[-100:]!r}, {done.stderr[-200:]!r}"
    return str(json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"])


def _lean(hook: str) -> list[str]:
    """The printed hook's flags on the lean entry (``python -I -S hook_process.py``), as a local hook runs."""
    flags = shlex.split(hook)[2:]  # after "handoff-mcp guard"
    return [sys.executable, "-I", "-S", str(Path(evidence_package.__file__).parent / "hook_process.py"), *flags]


def _round(
    times: dict[str, list[float]], hooks: dict[str, list[str]], event: bytes, env: dict[str, str], cwd: Path
) -> None:
    """One round: each hook asking (its cache emptied first), then cached, and the floors."""
    cache = Path(env["XDG_CACHE_HOME"])
    for name, command in hooks.items():
        shutil.rmtree(cache, ignore_errors=True)
        times[f"{name}_asks_server"].append(_once(command, event, env, cwd))
        times[f"{name}_cached"].append(_once(command, event, env, cwd))
    times["python_-c_pass"].append(_once(["sh", "-c", f"{sys.executable} -c pass"], b"", env, cwd))
    floor = [sys.executable, "-I", "-S", str(MINIMAL_HOOK)]
    start = time.perf_counter()
    done = subprocess.run(floor, input=event, capture_output=True, env=env, cwd=cwd, timeout=60, check=False)
    times["minimal_hook"].append(time.perf_counter() - start)
    checked(floor, done.returncode)


def _guard_times(created: dict[str, Any], clone: Path, runs: int) -> tuple[dict[str, list[float]], str]:
    line = shlex.split(created["executor_config"]["claude_code_cli"].splitlines()[-1])
    settings = json.loads(line[line.index("--settings") + 1])
    hook = settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    cache = clone.parent / ".cache"
    path = f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"
    env = GIT_ENV | {"HANDOFF_TOKEN": created["report_token"], "XDG_CACHE_HOME": str(cache), "PATH": path}
    tool = {"file_path": str(clone / "src" / "b" / "x.py"), "content": "x"}
    event = json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": tool, "cwd": str(clone)})
    lean = _lean(hook)
    subjects = ("guard_asks_server", "guard_cached", "lean_asks_server", "lean_cached")
    times: dict[str, list[float]] = {name: [] for name in (*subjects, "python_-c_pass", "minimal_hook")}
    decision = _decision(["sh", "-c", hook], event.encode(), env, clone)
    shutil.rmtree(cache, ignore_errors=True)
    for command in (lean, lean):  # asking, then from the cache
        if (lean_decision := _decision(command, event.encode(), env, clone)) != decision:
            raise SystemExit(f"the lean --url hook answered {lean_decision}, the printed one {decision}")
    for _ in range(runs):  # alternated, so drift on a shared machine touches all alike
        _round(times, {"guard": ["sh", "-c", hook], "lean": lean}, event.encode(), env, clone)
    return times, decision


def _audit_times(project: Path, clone: Path, created: dict[str, Any], base: str, runs: int) -> dict[str, Any]:
    for index in range(20):
        (clone / "src" / "a1" / f"f{index}.py").write_text("changed\n")
    git(clone, "commit", "-q", "-am", "work")
    git(clone, "push", "-q", "origin", "task-remote")
    checkpoint = git(clone, "rev-parse", "HEAD").strip()
    store = Store(project / "speculo" / ".speculo", project)
    from handoff_core.contract.report import Report

    ref = parse_ref(created["ref"])
    report = Report(
        session=ref.session, task=ref.task, status="completed", focused="Changed A1. Stopped. Next: review.",
        artifacts="src/a1", verification="none", source_checkpoint=checkpoint,
    )  # fmt: skip
    store.write_report(report, CHANGE, token=created["report_token"])
    fetch = ["git", "fetch", "-q", "--no-tags", "origin", "+refs/heads/task-remote:refs/bench/floor"]
    diff = ["git", "diff", "--name-status", "-z", "-M", base, checkpoint]
    times: dict[str, list[float]] = {"audit_task_fetching": [], "git_fetch_and_diff_floor": []}
    verdict = ""
    for _ in range(runs):
        start = time.perf_counter()
        verdict = audit_task(store.queries, ref).verdict
        times["audit_task_fetching"].append(time.perf_counter() - start)
        start = time.perf_counter()
        subprocess.run(fetch, cwd=project, env=GIT_ENV, capture_output=True, check=True)
        subprocess.run(diff, cwd=project, env=GIT_ENV, capture_output=True, check=True)
        times["git_fetch_and_diff_floor"].append(time.perf_counter() - start)
    return {"times": times, "verdict": verdict}


async def _run(work: Path, command: list[str], runs: int) -> dict[str, Any]:
    project, _, clone = _repositories(work)
    secret = work / "remote-secret"
    team, base = await _served(command, project, secret)
    try:
        created = await _dispatch(base, secret, project)
        times, decision = await anyio.to_thread.run_sync(_guard_times, created, clone, runs)
    finally:
        team.terminate()
        team.wait(timeout=30)
    head = git(project, "rev-parse", "HEAD").strip()
    audited = _audit_times(project, clone, created, head, runs)
    figures = {name: summary(values) for name, values in {**times, **audited["times"]}.items()}
    floor = figures["python_-c_pass"]["p50_ms"]
    return {
        **figures,
        "guard_decision": decision,
        "audit_verdict": audited["verdict"],
        # the lean entry's --url hook over the minimal hook script of the same round (the targets read these)
        "lean_asks_ratio": paired(times["lean_asks_server"], times["minimal_hook"]),
        "lean_cached_ratio": paired(times["lean_cached"], times["minimal_hook"]),
        # the printed line (handoff-mcp guard: site and the console script) over the same floor, for comparison
        "printed_asks_ratio": paired(times["guard_asks_server"], times["minimal_hook"]),
        "printed_cached_ratio": paired(times["guard_cached"], times["minimal_hook"]),
        "asks_ratio": round(figures["guard_asks_server"]["p50_ms"] / floor, 2),
        "cached_ratio": round(figures["guard_cached"]["p50_ms"] / floor, 2),
        "audit_ratio": round(
            figures["audit_task_fetching"]["p50_ms"] / figures["git_fetch_and_diff_floor"]["p50_ms"], 2
        ),
    }


def run(work: Path, command: list[str], runs: int) -> dict[str, Any]:
    return anyio.run(_run, work, command, runs)

"""Hook costs: each kind of event the agent CLIs send (pre-tool allow, pre-tool deny, post-tool after a
shell command: its tree's ``git status`` and the main tree's, stop without a REPORT), run as the
printed hook runs it (``python -I -S hook_process.py``) from a plain copy of the package, beside the
floor: a minimal ``python -I -S`` script that reads the event, on the same interpreter, medians of
runs alternated in one loop. The console script's way in (``handoff-mcp guard``: ``site`` and the
command's module) is timed beside them for the same deny, to show what the lean entry spares.

The section fails when the floor itself fails (its exit code, its reading of the event) or a hook
answers other than the verdict the event calls for: a figure is only worth what it measured.
"""

from __future__ import annotations

import compileall
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from bench.evidence import based_project, git
from bench.stats import paired, summary
from bench.trees import CHANGE
from handoff_core.contract.scope import Scope
from handoff_core.contract.task import TaskBody
from handoff_core.services.writing.dispatch import TaskRequest
from handoff_core.services.writing.store import Store

ROOT = Path(__file__).resolve().parents[1]
FLOOR = "import json, sys\nevent = json.loads(sys.stdin.buffer.read())\nsys.exit(0 if 'cwd' in event else 3)\n"
TARGET_RATIO = 1.5


def plain_copy(work: Path) -> Path:
    """The package as an install lays it down: plain files, byte-compiled, no editable finder."""
    site = work / "plain-site"
    for package in ("handoff_core", "server"):
        shutil.copytree(ROOT / package, site / package, ignore=shutil.ignore_patterns("__pycache__"))
        compileall.compile_dir(site / package, quiet=1)
    return site


def _task(work: Path) -> tuple[Store, str, str, Path]:
    project = work / "hooks"
    based_project(project, {f"src/a1/f{index}.py": f"{index}\n" for index in range(50)})
    tree = work / "hooks-wt"
    git(project, "worktree", "add", "-q", str(tree), "-b", "task")
    store = Store(project / "speculo" / ".speculo", project)
    scope = Scope(workspace="required", writable=("src/a1/**",), worktree=str(tree), branch="task")
    body = TaskBody(kind="implementation", goal="Change A1.", inputs="None.", scope=scope, acceptance="`pytest` ok.")
    stored = store.create_task(TaskRequest(change=CHANGE, topic="hooks", body=body))
    return store, str(stored.ref), stored.sha256, tree


def _events(tree: Path) -> dict[str, tuple[str, bytes, str]]:
    """Per kind: the --event flag, the event, and the verdict it calls for."""

    def pre(path: str) -> bytes:
        given = {"file_path": str(tree / path), "content": "x"}
        return json.dumps(
            {"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": given, "cwd": str(tree)}
        ).encode()

    post = {"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"command": "pytest -q"}}
    post |= {"tool_use_id": "toolu_bench"}
    stop = {"hook_event_name": "Stop", "stop_hook_active": False, "cwd": str(tree)}
    return {
        "pre_tool_allow": ("pre-tool", pre("src/a1/f1.py"), "allow"),
        "pre_tool_deny": ("pre-tool", pre("src/b/x.py"), "deny"),
        "post_tool": ("post-tool", json.dumps({**post, "tool_response": "ok", "cwd": str(tree)}).encode(), "allow"),
        "stop": ("stop", json.dumps(stop).encode(), "block"),
    }


def _run(command: list[str], stdin: bytes, env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess[bytes]]:
    start = time.perf_counter()
    done = subprocess.run(command, input=stdin, capture_output=True, check=False, env=env, timeout=60)
    return time.perf_counter() - start, done


def _verdict(done: subprocess.CompletedProcess[bytes]) -> str:
    if done.returncode != 0:
        return f"exit {done.returncode}: {done.stderr[-200:]!r}"
    if not done.stdout:
        return "allow"
    answer = json.loads(done.stdout)
    return "block" if answer.get("decision") == "block" else answer["hookSpecificOutput"]["permissionDecision"]


def run(work: Path, runs: int) -> dict[str, object]:
    store, ref, sha, tree = _task(work)
    site = plain_copy(work)
    floor_script = work / "floor_hook.py"
    floor_script.write_text(FLOOR)
    entry = [sys.executable, "-I", "-S", str(site / "handoff_core/services/evidence/hook_process.py")]
    roots = ["--project-root", str(store.roots.project_root), "--state-root", str(store.roots.state_root)]
    env = {**os.environ, "HANDOFF_CACHE_DIR": str(work / "hook-cache")}
    events = _events(tree)
    console = [sys.executable, "-c", "import sys; from server.cli import main; sys.exit(main())", "guard"]
    console_env = {**env, "PYTHONPATH": str(site)}
    times: dict[str, list[float]] = {"floor": [], **{name: [] for name in events}, "console_pre_tool_deny": []}
    for round_ in range(runs):  # alternated: drift on a shared machine touches every kind alike
        spent, done = _run([sys.executable, "-I", "-S", str(floor_script)], events["pre_tool_deny"][1], env)
        if done.returncode != 0:
            raise SystemExit(f"the floor hook script failed (exit {done.returncode}): {done.stderr[-300:]!r}")
        times["floor"].append(spent)
        for name, (kind, given, expected) in events.items():
            # A new session each round for the stop: every run blocks, as a first stop does.
            data = json.dumps({**json.loads(given), "session_id": f"bench-{round_}"}).encode()
            args = ["--ref", ref, "--task-sha256", sha, "--event", kind, *roots]
            if kind == "post-tool":  # its command's start, marked by the pre-tool hook as the CLIs run them (untimed)
                marked = json.dumps({**json.loads(data), "hook_event_name": "PreToolUse"}).encode()
                _run([*entry, *args[:4], "--event", "pre-tool", *roots], marked, env)
            spent, done = _run([*entry, *args], data, env)
            if (got := _verdict(done)) != expected:
                raise SystemExit(f"the {name} hook answered {got}, not {expected}: its time would measure nothing")
            times[name].append(spent)
        args = ["--ref", ref, "--task-sha256", sha, *roots]
        spent, done = _run([*console, *args], events["pre_tool_deny"][1], console_env)
        if (got := _verdict(done)) != "deny":
            raise SystemExit(f"the console-script hook answered {got}, not deny")
        times["console_pre_tool_deny"].append(spent)
    figures = {name: summary(values) for name, values in times.items()}
    # Each round's subject over that round's floor: a burst of load hits both, not one.
    ratios = {name: paired(times[name], times["floor"]) for name in [*events, "console_pre_tool_deny"]}
    return {**figures, "ratio_to_floor": ratios, "target_ratio": TARGET_RATIO, "entry": " ".join(entry[:3])}

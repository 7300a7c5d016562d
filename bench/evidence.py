"""Evidence costs: the guard per hook event (a fresh ``handoff-mcp guard`` process, as an agent CLI
runs it, beside a minimal hook script in an interpreter without site), and ``audit_task`` of a
1,000-file and a 10,000-file change beside ``git diff --name-status`` of the same change alone, in
the same run (the first audit of each, which no earlier audit of that tree helped, is shown apart)."""

from __future__ import annotations

import hashlib
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

from bench.requests import report_of
from bench.stats import FloorFailed, checked, paired, summary
from bench.trees import CHANGE, make_change
from handoff_core.contract.ids import parse_ref
from handoff_core.contract.proof import proof_of, signing_key
from handoff_core.contract.report import Report
from handoff_core.contract.scope import Scope
from handoff_core.contract.task import TaskBody
from handoff_core.files.index_cache import CLOCK_LAG
from handoff_core.layout import TASK_FILE
from handoff_core.services.evidence.audit import audit_task
from handoff_core.services.writing.dispatch import TaskRequest
from handoff_core.services.writing.store import Store

FOCUS = "Built the files. Kept the API. Stopped after tests. Next: review."
TOKEN = "bench-report-token-aaaaaaaaaaaa"
DENIED = b"outside"  # the guard's deny of a write outside its task's scope names it so
GIT_ENV = {  # a git of its own: no user or system config, fixed identities (the tests use it too)
    **{k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "b",
    "GIT_AUTHOR_EMAIL": "b@example.com",
    "GIT_COMMITTER_NAME": "b",
    "GIT_COMMITTER_EMAIL": "b@example.com",
}


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, env=GIT_ENV, capture_output=True, text=True, check=True, timeout=60
    ).stdout


def based_project(project: Path, files: dict[str, str], change: str = CHANGE) -> None:
    """A git project holding ``change`` and ``files`` (path -> text), committed on main as its base; the
    handoff tree is ignored, as the walk-through's projects ignore it."""
    make_change(project / "speculo" / ".speculo", change)
    git(project, "init", "-q", "-b", "main")
    # A commit of thousands of files starts git's automatic gc; run in the foreground, it packs the
    # objects before anything is timed, instead of beside the timed rounds in the background.
    git(project, "config", "gc.autoDetach", "false")
    (project / ".gitignore").write_text("speculo/\n")
    for name, text in files.items():
        path = project / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "base")


def _files(root: Path, count: int, text: str) -> None:
    for name, content in _named(count, text).items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)


def _named(count: int, text: str) -> dict[str, str]:
    return {f"src/a1/d{index % 20}/f{index}.py": f"{text} {index}\n" for index in range(count)}


AUDIT_SIZES = (1_000, 10_000)  # files changed from the base to the checkpoint


def _setup(work: Path, files: int, name: str = "evidence") -> tuple[Store, str, Path, str, str]:
    project = work / name
    state_root = project / "speculo" / ".speculo"
    based_project(project, _named(files, "first"))
    tree = work / f"{name}-wt"
    git(project, "worktree", "add", "-q", str(tree), "-b", "task")
    store = Store(state_root, project)
    scope = Scope(workspace="required", writable=("src/a1/**",), worktree=str(tree), branch="task")
    body = TaskBody(
        kind="implementation", goal="Change the files.", inputs="None.", scope=scope, acceptance="`pytest` exits 0."
    )
    ref = store.create_task(TaskRequest(change=CHANGE, topic="change-files", body=body)).ref
    base = git(tree, "rev-parse", "HEAD").strip()
    _files(tree, files, "second")
    git(tree, "add", "-A")
    git(tree, "commit", "-q", "-m", "change")
    checkpoint = git(tree, "rev-parse", "HEAD").strip()
    report = report_of(
        ref,
        status="completed",
        focused=FOCUS,
        artifacts="src/a1",
        verification="ok",
        source_checkpoint=checkpoint,
    )
    store.write_report(report, CHANGE)
    return store, str(ref), tree, base, checkpoint


def _once(command: list[str], stdin: bytes, cwd: Path | None = None, says: bytes = b"") -> float:
    """One run; an exit other than 0, or an answer without ``says``, fails the bench (a crashed floor or
    guard times nothing)."""
    start = time.perf_counter()
    done = subprocess.run(command, input=stdin, capture_output=True, check=False, cwd=cwd)
    elapsed = time.perf_counter() - start
    checked(command, done.returncode)
    if says not in done.stdout:
        raise FloorFailed(f"{' '.join(command)} answered {done.stdout[:200]!r}, not {says!r}")
    return elapsed


def _proof_times(store: Store, runs: int) -> dict[str, list[float]]:
    """Verifying one signed REPORT from the files (what judging a returned task adds), beside hashing it."""
    ref = store.create_task(
        TaskRequest(change=CHANGE, topic="signed", body=_review(), signing_key=lambda _: signing_key(TOKEN))
    ).ref
    stored = store.write_report(
        Report(session=ref.session, task=ref.task, status="completed", focused=FOCUS, artifacts="x", verification="y"),
        CHANGE,
        token=TOKEN,
    )
    task, report = (store.roots.task_dir(ref) / TASK_FILE).read_bytes(), stored.path.read_bytes()
    assert proof_of(task, report) == "valid"
    times: dict[str, list[float]] = {"proof_verify": [], "sha256_floor": []}
    for _ in range(runs):
        start = time.perf_counter()
        proof_of(task, report)
        times["proof_verify"].append(time.perf_counter() - start)
        start = time.perf_counter()
        hashlib.sha256(report).hexdigest()
        times["sha256_floor"].append(time.perf_counter() - start)
    return times


def _review() -> TaskBody:
    scope = Scope(workspace=None, writable=(), read_only=("src/**",), shared=(), artifacts=("out/**",))
    return TaskBody(kind="review", goal="Review the files.", inputs="None.", scope=scope, acceptance="Findings listed.")


def _settle() -> None:
    """Wait until the files just written are a whole second old, as a task's files are by the time its
    REPORT is audited: an audit keeps the index it hashed them into only then (``index_cache``: a file
    changed in the second its read began could match its stat data later), so audits in that second
    would each hash every file again, which no audit after it does."""
    time.sleep(max(0.0, math.floor(time.time()) + 1 + CLOCK_LAG - time.time()))


def _audits(work: Path, files: int, runs: int) -> dict[str, object]:
    """``audit_task`` of a ``files``-file change, round by round beside ``git diff`` of the same change."""
    store, ref, tree, base, checkpoint = _setup(work, files, f"audit-{files}")
    _settle()
    diff = ["git", "diff", "--name-status", "-z", "-M", base, checkpoint]
    times: dict[str, list[float]] = {"audit_task": [], "git_diff_floor": []}
    verdict = ""
    for _ in range(runs):  # alternated, so drift on a shared machine touches both alike
        start = time.perf_counter()
        verdict = audit_task(store.queries, parse_ref(ref)).verdict
        times["audit_task"].append(time.perf_counter() - start)
        times["git_diff_floor"].append(_once(diff, b"", tree))
    return {
        **{name: summary(values) for name, values in times.items()},
        "first_audit_ms": round(times["audit_task"][0] * 1000, 3),
        "files": files,
        "verdict": verdict,
        "ratio": paired(times["audit_task"], times["git_diff_floor"]),
    }


def run(work: Path, runs: int) -> dict[str, object]:
    store, ref, tree, _, _ = _setup(work, 10)
    event = json.dumps(
        {
            "hook_event_name": "PreToolUse",
            "tool_name": "Write",
            "tool_input": {"file_path": str(tree / "src" / "b" / "x.py")},
            "cwd": str(tree),
        }
    ).encode()
    roots = ["--project-root", str(store.roots.project_root), "--state-root", str(store.roots.state_root)]
    guard = [str(Path(sys.executable).parent / "handoff-mcp"), "guard", "--ref", ref, *roots]
    # The floor: a minimal hook script in an interpreter without site, so no editable install's finder
    # (about 10 ms) or .pth file is counted in it.
    floor = [sys.executable, "-I", "-S", str(Path(__file__).resolve().parent / "minimal_hook.py")]
    times: dict[str, list[float]] = {"guard_event": [], "minimal_hook": []}
    for _ in range(runs):  # alternated, so drift on a shared machine touches all alike
        times["guard_event"].append(_once(guard, event, says=DENIED))  # a write outside the scope, denied
        times["minimal_hook"].append(_once(floor, event, says=b"PreToolUse"))
    times |= _proof_times(store, runs * 20)
    figures = {name: summary(values) for name, values in times.items()}
    return {
        **figures,
        "guard_ratio": paired(times["guard_event"], times["minimal_hook"]),
        "audit": {str(files): _audits(work, files, runs) for files in AUDIT_SIZES},
    }

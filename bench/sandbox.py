"""The sandbox's start-up: a task's launch (``python -I -S sandbox_process.py … -- /bin/true``, as a
printed line starts it, from a plain copy of the package) beside the floor, the same interpreter doing
a bare ``exec`` of the same command; medians of runs alternated in one loop, and the milliseconds the
sandbox adds, round by round.

The section fails when the floor fails, or when the launch does not contain: before timing, the same
launch must refuse a write outside the task's scope and allow one inside it.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from pathlib import Path

from bench.evidence import based_project
from bench.hooks import plain_copy
from bench.stats import added_ms, paired, summary
from bench.trees import CHANGE
from handoff_core.contract.scope import Scope
from handoff_core.contract.task import TaskBody
from handoff_core.files import landlock
from handoff_core.services.writing.dispatch import TaskRequest
from handoff_core.services.writing.store import Store

TARGET_ADDED_MS = 20.0
FLOOR = "import os, sys; os.execv(sys.argv[1], sys.argv[1:])"


def _launch(work: Path, site: Path) -> tuple[list[str], Path]:
    project = work / "sandbox"
    based_project(project, {"src/a1/core.py": "x\n", "src/b/other.py": "x\n"})
    store = Store(project / "speculo" / ".speculo", project)
    scope = Scope(workspace="current", writable=("src/a1/**",))
    body = TaskBody(kind="implementation", goal="Change A1.", inputs="None.", scope=scope, acceptance="`pytest` ok.")
    stored = store.create_task(TaskRequest(change=CHANGE, topic="sandbox", body=body))
    secret = work / "sandbox-secret"
    secret.write_text("s" * 64)
    entry = [sys.executable, "-I", "-S", str(site / "handoff_core/services/containment/sandbox_process.py")]
    roots = ["--project-root", str(project), "--state-root", str(store.roots.state_root)]
    task = ["--ref", str(stored.ref), "--task-sha256", stored.sha256, "--secret-file", str(secret)]
    return [*entry, *roots, *task, "--"], project


def _contains(launch: list[str], project: Path, env: dict[str, str]) -> None:
    script = "echo in > src/a1/in.txt && ! (echo out > src/b/out.txt) 2>/dev/null"
    done = subprocess.run(
        [*launch, "sh", "-c", script], cwd=project, env=env, capture_output=True, timeout=60, check=False
    )
    if done.returncode != 0 or (project / "src/b/out.txt").exists() or not (project / "src/a1/in.txt").exists():
        raise SystemExit(f"the sandbox did not contain the launch (exit {done.returncode}): {done.stderr[-300:]!r}")


def _brokers_gone(marker: bytes) -> None:
    """Wait (bounded) until no broker of the bench's task runs: each ends with its command, a moment
    later; the next round must not share the CPUs with it."""
    for name in os.listdir("/proc"):
        try:
            if not name.isdigit() or marker not in Path(f"/proc/{name}/cmdline").read_bytes():
                continue
            fd = os.pidfd_open(int(name))
        except OSError:
            continue
        try:
            select.select([fd], [], [], 10.0)
        finally:
            os.close(fd)


def _timed(command: list[str], env: dict[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, check=False, timeout=60)
    spent = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{command[:4]} failed (exit {done.returncode}): {done.stderr[-300:]!r}")
    return spent


def run(work: Path, runs: int) -> dict[str, object]:
    if landlock.abi() == 0:
        return {"skipped": "this kernel offers no Landlock"}
    site = plain_copy(work / "sandbox-site")
    launch, project = _launch(work, site)
    env = {**os.environ, "HOME": str(work / "sandbox-home"), "HANDOFF_CACHE_DIR": str(work / "sandbox-cache")}
    Path(env["HOME"]).mkdir(exist_ok=True)
    _contains(launch, project, env)
    marker = launch[launch.index("--ref") + 1].encode()
    times: dict[str, list[float]] = {"floor": [], "sandbox": []}
    for _ in range(runs):  # alternated: drift on a shared machine touches both alike
        times["floor"].append(_timed([sys.executable, "-I", "-S", "-c", FLOOR, "/bin/true"], env, project))
        times["sandbox"].append(_timed([*launch, "/bin/true"], env, project))
        _brokers_gone(marker)
    return {
        **{name: summary(values) for name, values in times.items()},
        "added_ms": added_ms(times["sandbox"], times["floor"]),
        "ratio_to_floor": paired(times["sandbox"], times["floor"]),
        "target_added_ms": TARGET_ADDED_MS,
        "abi": landlock.abi(),
    }

"""The cost of a replay: ``verify_task`` of a worktree task with two acceptance checks (a ``unittest``
run of a small package, and ``true``) beside its floor, the same two check lines run directly with
``sh -c`` in the task's worktree; rounds alternated, medians, and what the replay adds round by round
(reading the TASK and the audit, the throwaway copy, a supervisor and a sandbox per check, the judging
of what changed, the record for status).

The section fails when the floor fails, when the replay does not pass the work (it is right), or when
the replay does not contain: before timing, a check that writes outside its copy must be denied.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from bench.evidence import FOCUS, based_project, git
from bench.requests import report_of
from bench.stats import added_ms, paired, summary
from bench.trees import CHANGE
from handoff_core.contract.checks import Check
from handoff_core.contract.ids import Ref
from handoff_core.contract.scope import Scope
from handoff_core.contract.task import TaskBody
from handoff_core.files import landlock
from handoff_core.services.acceptance.verification import verify_task
from handoff_core.services.capabilities.tokens import task_anchor
from handoff_core.services.containment.replay import NETWORK_ABI
from handoff_core.services.writing.dispatch import TaskRequest
from handoff_core.services.writing.store import Store

UNITTEST = f"{sys.executable} -m unittest discover -s tests -q"
CHECKS = (Check(UNITTEST), Check("true"))
FILES = {
    ".gitignore": "speculo/\n__pycache__/\n",
    "src/calc/__init__.py": "def add(a, b):\n    return a - b\n",
    "tests/test_calc.py": (
        "import os\nimport sys\nimport unittest\n\n"
        "sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'src'))\n\n"
        "from calc import add\n\n\nclass Add(unittest.TestCase):\n"
        "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n"
    ),
}


def _task(store: Store, project: Path, branch: str, checks: tuple[Check, ...]) -> tuple[Ref, Path]:
    tree = project.parent / f"verify-{branch}"
    git(project, "worktree", "add", "-q", str(tree), "-b", branch)
    scope = Scope(workspace="required", writable=("src/**",), worktree=str(tree), branch=branch)
    body = TaskBody(kind="implementation", goal="Fix add.", inputs="None.", scope=scope, acceptance="Tests pass.")
    ref = store.create_task(TaskRequest(change=CHANGE, topic=branch, body=body._replace(checks=checks))).ref
    (tree / "src/calc/__init__.py").write_text("def add(a, b):\n    return a + b\n")
    git(tree, "commit", "-q", "-am", "fix")
    checkpoint = git(tree, "rev-parse", "HEAD").strip()
    report = report_of(
        ref,
        status="completed",
        focused=FOCUS,
        artifacts="src/calc",
        verification="unittest: exit 0",
        source_checkpoint=checkpoint,
    )
    store.write_report(report, ref.change)
    return ref, tree


def _contains(store: Store, project: Path, secret: Path) -> None:
    outside = project.parent / "escaped.txt"
    ref, _ = _task(store, project, "escape", (Check(f"echo out > {outside}"),))
    found = verify_task(store.queries, ref, str(secret))
    if found.verdict != "failed" or outside.exists():
        raise SystemExit(f"the replay did not contain its check: {found.verdict}, {found.reason}")


def _direct(tree: Path) -> float:
    start = time.perf_counter()
    for check in CHECKS:
        done = subprocess.run(["/bin/sh", "-c", check.run], cwd=tree, capture_output=True, check=False, timeout=120)
        if done.returncode != 0:
            raise SystemExit(f"the floor's check {check.run!r} failed (exit {done.returncode}): {done.stderr[-300:]!r}")
    return time.perf_counter() - start


def _replay(store: Store, ref: Ref, secret: Path) -> float:
    start = time.perf_counter()
    found = verify_task(store.queries, ref, str(secret))
    spent = time.perf_counter() - start
    if found.verdict != "passed":
        raise SystemExit(f"the replay did not pass the work: {found.reason}")
    return spent


def run(work: Path, runs: int) -> dict[str, object]:
    if landlock.abi() < NETWORK_ABI:
        return {"skipped": f"this kernel's Landlock (ABI {landlock.abi()}) cannot contain a replay"}
    project = work / "verify" / "project"
    based_project(project, FILES)
    secret = work / "verify" / "secret"
    secret.write_bytes(b"s" * 64)
    cached = os.environ.get("HANDOFF_CACHE_DIR")
    os.environ["HANDOFF_CACHE_DIR"] = str(work / "verify" / "cache")  # the verdicts kept for status: not the user's
    try:
        return _measured(project, secret, runs)
    finally:
        if cached is None:
            os.environ.pop("HANDOFF_CACHE_DIR", None)
        else:
            os.environ["HANDOFF_CACHE_DIR"] = cached


def _measured(project: Path, secret: Path, runs: int) -> dict[str, object]:
    store = Store(project / "speculo" / ".speculo", project)
    anchor = task_anchor(secret.read_bytes(), store.roots.state_root, secret)
    store.queries.use_anchor(lambda: anchor)
    _contains(store, project, secret)
    ref, tree = _task(store, project, "work", CHECKS)
    times: dict[str, list[float]] = {"direct": [], "replay": []}
    for _ in range(runs):  # alternated: drift on a shared machine touches both alike
        times["direct"].append(_direct(tree))
        times["replay"].append(_replay(store, ref, secret))
    return {
        **{name: summary(values) for name, values in times.items()},
        "added_ms": added_ms(times["replay"], times["direct"]),
        "ratio_to_direct": paired(times["replay"], times["direct"]),
        "checks": len(CHECKS),
        "abi": landlock.abi(),
    }

"""handoff-validate per invocation, beside the interpreter floor and (optionally) the seed validator."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

from bench.stats import summary
from handoff_core.validator import arguments

SEED_ENV = "HANDOFF_SEED_VALIDATOR"  # e.g. "node /path/to/validate-handoff.mjs"


def _once(command: list[str]) -> float:
    """One run, timed to its exit by a blocking wait: ``subprocess.run(timeout=…)`` polls with back-off
    sleeps, which rounds every figure up to its next poll (31.5, 63.5, 113.5 ms…)."""
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    child.wait()  # no timeout: waitpid blocks until the exit, no polling
    return time.perf_counter() - start


def _alternated(commands: dict[str, list[str]], runs: int) -> dict[str, dict[str, float]]:
    """Each command once per round, in turn, so drift on the shared machine touches all alike."""
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, command in commands.items():
            times[name].append(_once(command))
    return {name: summary(values) for name, values in times.items()}


def run(project: Path, state_root: Path, ref: tuple[str, str, str], runs: int) -> dict[str, object]:
    change, session, task = ref
    args = arguments(str(project), change, session, task, "return", str(state_root))
    validate = Path(sys.executable).parent / "handoff-validate"
    commands = {
        "python_-c_pass": [sys.executable, "-c", "pass"],
        "python_-c_import_yaml": [sys.executable, "-c", "import yaml"],
        "handoff-validate": [str(validate), *args],
    }
    node = shutil.which("node")
    if node:  # the least any node validator can take: the seed's would start node and then do more
        commands["node_-e_empty"] = [node, "-e", ""]
    seed = os.environ.get(SEED_ENV)
    if seed:
        commands["seed_validate-handoff.mjs"] = [*shlex.split(seed), *args]
    result: dict[str, object] = {"interpreter": os.path.realpath(sys.executable), **_alternated(commands, runs)}
    result.setdefault("seed_validate-handoff.mjs", f"not run: set {SEED_ENV}")
    return result

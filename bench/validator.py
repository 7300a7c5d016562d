"""handoff-validate per invocation on the return stage of three tasks (a review, an implementation, a
signed implementation), beside the interpreter floors and node's own start, in the same rounds."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

from bench.stats import checked, paired, summary
from handoff_core.validator import arguments

SEED_ENV = "HANDOFF_SEED_VALIDATOR"  # e.g. "node /path/to/validate-handoff.mjs"
CASES = ("review", "implementation", "implementation_signed")


def _once(command: list[str]) -> float:
    """One run, timed to its exit by a blocking wait: ``subprocess.run(timeout=…)`` polls with back-off
    sleeps, which rounds every figure up to its next poll (31.5, 63.5, 113.5 ms…). Any exit but 0
    (a valid tree, a floor that ran) fails the bench."""
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    returncode = child.wait()  # no timeout: waitpid blocks until the exit, no polling
    elapsed = time.perf_counter() - start
    checked(command, returncode)
    return elapsed


def _alternated(commands: dict[str, list[str]], runs: int) -> dict[str, list[float]]:
    """Each command once per round, in turn, so drift on the shared machine touches all alike."""
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, command in commands.items():
            times[name].append(_once(command))
    return times


def run(project: Path, state_root: Path, refs: dict[str, tuple[str, str, str]], runs: int) -> dict[str, object]:
    """``refs``: the returned task of each of ``CASES``. Each case's ratio pairs it with each floor of its round."""
    validate = str(Path(sys.executable).parent / "handoff-validate")
    commands = {
        "python_-c_pass": [sys.executable, "-c", "pass"],
        "python_-c_import_yaml": [sys.executable, "-c", "import yaml"],
    }
    for case in CASES:
        commands[f"handoff-validate_{case}"] = [
            validate,
            *arguments(str(project), *refs[case], "return", str(state_root)),
        ]
    node = shutil.which("node")
    if node:  # the least any node validator can take: the seed's would start node and then do more
        commands["node_-e_empty"] = [node, "-e", ""]
    seed = os.environ.get(SEED_ENV)
    if seed:
        args = arguments(str(project), *refs["implementation"], "return", str(state_root))
        commands["seed_validate-handoff.mjs"] = [*shlex.split(seed), *args]
    times = _alternated(commands, runs)
    result: dict[str, object] = {"interpreter": os.path.realpath(sys.executable)}
    result |= {name: summary(values) for name, values in times.items()}
    for case in CASES:
        ours = times[f"handoff-validate_{case}"]
        result[f"ratio_{case}"] = {
            floor: paired(ours, times[name])
            for floor, name in (
                ("yaml", "python_-c_import_yaml"),
                ("node", "node_-e_empty"),
                ("seed", "seed_validate-handoff.mjs"),
            )
            if name in times
        }
    result.setdefault("seed_validate-handoff.mjs", f"not run: set {SEED_ENV}")
    return result

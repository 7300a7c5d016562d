"""handoff-validate per invocation, beside the interpreter floor and (optionally) the seed validator."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

from bench.stats import summary
from handoff_core.validator import arguments

SEED_ENV = "HANDOFF_SEED_VALIDATOR"  # e.g. "node /path/to/validate-handoff.mjs"


def _times(command: list[str], runs: int) -> dict[str, float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, timeout=60)
        times.append(time.perf_counter() - start)
    return summary(times)


def run(project: Path, state_root: Path, ref: tuple[str, str, str], runs: int) -> dict[str, object]:
    change, session, task = ref
    args = arguments(str(project), change, session, task, "return", str(state_root))
    validate = Path(sys.executable).parent / "handoff-validate"
    result: dict[str, object] = {
        "interpreter": os.path.realpath(sys.executable),
        "python_-c_pass": _times([sys.executable, "-c", "pass"], runs),
        "handoff-validate": _times([str(validate), *args], runs),
    }
    seed = os.environ.get(SEED_ENV)
    result["seed_validate-handoff.mjs"] = (
        _times([*shlex.split(seed), *args], runs) if seed else f"not run: set {SEED_ENV}"
    )
    return result

"""handoff-validate per invocation on the return stage of three tasks (a review, an implementation, a
signed implementation), as a plain install runs it, beside the floors in the same rounds.

The command timed is the one ``pip install`` lays down: a fresh venv holding a byte-compiled copy of
the package (no editable finder), the validator's dependencies linked in, and ``bin/handoff-validate``
written as pip writes a console script (``tests/core/test_validator_install.py`` installs the package
with pip and checks that the wrapper is this one, byte for byte). The seed's ``validate-handoff.mjs``
imports modules the seeds do not hold, so node's own bare start stands for it: a LOWER bound on the
seed's time, which makes a ratio to it an UPPER bound on the ratio to the seed. With
``HANDOFF_SEED_VALIDATOR`` set the seed itself is timed too.
"""

from __future__ import annotations

import compileall
import importlib.util
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
TARGET = 0.6  # the issue's: at most 0.6x the seed's node validator
ROOT = Path(__file__).resolve().parents[1]
# What the validator may import beyond the standard library (yaml for hand-written frontmatter,
# cryptography for a signed REPORT, with what cryptography's core loads), linked into the plain venv.
DEPENDENCIES = ("yaml", "_yaml", "cryptography", "_cffi_backend", "cffi")
# pip's console-script wrapper (distlib's ScriptMaker template), as ``pip install`` writes it.
CONSOLE_SCRIPT = """#!{python}
# -*- coding: utf-8 -*-
import re
import sys
from handoff_core.validator import main
if __name__ == '__main__':
    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])
    sys.exit(main())
"""


def console_script(python: str) -> str:
    """The ``handoff-validate`` pip writes into an environment whose interpreter is ``python``."""
    return CONSOLE_SCRIPT.format(python=python)


def site_packages(python: Path) -> Path:
    """Where ``pip install`` puts packages for the interpreter ``python``."""
    code = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    done = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True, timeout=60)
    return Path(done.stdout.strip())


def link_dependencies(site: Path) -> None:
    """This environment's copies of ``DEPENDENCIES``, linked into ``site`` (no .pth file is added)."""
    for name in DEPENDENCIES:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            continue  # not installed here (cffi's Python layer, say): nothing the validator can load either
        origin = Path(spec.origin)
        source = origin.parent if spec.submodule_search_locations else origin
        (site / source.name).symlink_to(source)


def plain_install(work: Path) -> Path:
    """A fresh venv as ``pip install`` leaves it, but built in a second: returns its ``bin``."""
    venv = work / "plain-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    site = site_packages(python)
    shutil.copytree(ROOT / "handoff_core", site / "handoff_core", ignore=shutil.ignore_patterns("__pycache__"))
    compileall.compile_dir(site / "handoff_core", quiet=1)
    link_dependencies(site)
    script = venv / "bin" / "handoff-validate"
    script.write_text(console_script(str(python)))
    script.chmod(0o755)
    return venv / "bin"


def _once(command: list[str], env: dict[str, str]) -> float:
    """One run, timed to its exit by a blocking wait: ``subprocess.run(timeout=…)`` polls with back-off
    sleeps, which rounds every figure up to its next poll (31.5, 63.5, 113.5 ms…). Any exit but 0
    (a valid tree, a floor that ran) fails the bench."""
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    returncode = child.wait()  # no timeout: waitpid blocks until the exit, no polling
    elapsed = time.perf_counter() - start
    checked(command, returncode)
    return elapsed


def _alternated(commands: dict[str, list[str]], runs: int) -> dict[str, list[float]]:
    """Each command once per round, in turn, so drift on the shared machine touches all alike. Run as a
    user's shell runs them: no PYTHON* variables (a test's PYTHONPATH would add its own start-up)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTHON")}
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, command in commands.items():
            times[name].append(_once(command, env))
    return times


FLOORS = (  # a ratio's name, and the command it divides by
    ("node", "node_-e_empty"),
    ("seed", "seed_validate-handoff.mjs"),
    ("python -I -S", "python_-I_-S_-c_pass"),
    ("yaml", "python_-c_import_yaml"),
)


def run(
    work: Path, project: Path, state_root: Path, refs: dict[str, tuple[str, str, str]], runs: int
) -> dict[str, object]:
    """``refs``: the returned task of each of ``CASES``. Each case's ratio pairs it with each floor of its round."""
    bin_dir = plain_install(work)
    python = str(bin_dir / "python")
    commands = {
        "python_-I_-S_-c_pass": [python, "-I", "-S", "-c", "pass"],  # the interpreter alone
        "python_-c_pass": [python, "-c", "pass"],  # what the console script's interpreter costs before any import
        "python_-c_import_yaml": [python, "-c", "import yaml"],
    }
    for case in CASES:
        args = arguments(str(project), *refs[case], "return", str(state_root))
        commands[f"handoff-validate_{case}"] = [str(bin_dir / "handoff-validate"), *args]
    node = shutil.which("node")
    if node:  # the least any node validator can take: the seed's would start node and then do more
        commands["node_-e_empty"] = [node, "-e", ""]
    seed = os.environ.get(SEED_ENV)
    if seed:
        args = arguments(str(project), *refs["implementation"], "return", str(state_root))
        commands["seed_validate-handoff.mjs"] = [*shlex.split(seed), *args]
    times = _alternated(commands, runs)
    result: dict[str, object] = {
        "interpreter": os.path.realpath(sys.executable),
        "command": f"{bin_dir / 'handoff-validate'} (pip's console script in a plain venv)",
        "target_ratio": TARGET,
    }
    result |= {name: summary(values) for name, values in times.items()}
    for case in CASES:
        ours = times[f"handoff-validate_{case}"]
        result[f"ratio_{case}"] = {floor: paired(ours, times[name]) for floor, name in FLOORS if name in times}
    result.setdefault("seed_validate-handoff.mjs", f"not run: set {SEED_ENV}")
    return result

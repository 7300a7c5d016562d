"""``handoff-validate`` as ``pip install`` lays it down in a fresh venv: the console script the bench
times, answering as the command of this checkout does (same output, same exit codes)."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from bench.requests import implementation, report_of
from bench.validator import console_script, link_dependencies, site_packages
from handoff_core.contract.proof import PROOF_INVALID, signing_key
from handoff_core.services.writing.store import Store
from handoff_core.validator import arguments

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(sys.executable).parent / "handoff-validate"
TOKEN = "install-token-aaaaaaaaaaaaaaaaaaaa"
pytestmark = pytest.mark.slow  # a real pip install, then the command as processes


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``bin`` of a fresh venv where pip installed this checkout (not editable); the dependencies the
    validator can load are this environment's, linked in (a wheel-less machine could not fetch them)."""
    venv = tmp_path_factory.mktemp("installed") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    pip = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q", "--no-deps"]
    subprocess.run([*pip, str(ROOT)], check=True, timeout=600, capture_output=True)
    link_dependencies(site_packages(venv / "bin" / "python"))
    return venv / "bin"


def both(installed: Path, *args: str) -> tuple[tuple[int, str, str], tuple[int, str, str]]:
    """(exit, stdout, stderr) of the installed command and of this checkout's, on the same arguments."""
    answers = []
    for command in (installed / "handoff-validate", HERE):
        done = subprocess.run([str(command), *args], capture_output=True, text=True, timeout=60, check=False)
        answers.append((done.returncode, done.stdout, done.stderr))
    return answers[0], answers[1]


def returned(project: Path, store: Store, token: str | None) -> list[str]:
    request = replace(implementation(), signing_key=lambda ref: signing_key(TOKEN))
    ref = store.create_task(request).ref
    focused = "Built A1. Kept the API. Stopped after tests. Next: review."
    report = report_of(ref, status="completed", focused=focused, artifacts="x", verification="y")
    store.write_report(report, ref.change, token=token)
    return arguments(str(project), ref.change, ref.session, ref.task, "return")


def test_pip_writes_the_console_script_the_bench_times(installed: Path) -> None:
    script = (installed / "handoff-validate").read_text()
    interpreter = script.splitlines()[0].removeprefix("#!")
    assert Path(interpreter).parent == installed
    assert script == console_script(interpreter)
    assert not list(site_packages(installed / "python").glob("__editable__*"))  # a plain install, no finder


def test_the_installed_command_answers_an_implementation_return_as_this_checkout(
    installed: Path, project: Path, store: Store
) -> None:
    for token in (None, TOKEN):  # a hand-written (unsigned) REPORT, and a signed one
        mine, here = both(installed, *returned(project, store, token))
        assert mine == here
        assert mine[0] == 0
        assert json.loads(mine[1])["errors"] == []


def test_the_installed_command_fails_an_edited_report_and_bad_arguments_as_this_checkout(
    installed: Path, project: Path, store: Store
) -> None:
    args = returned(project, store, TOKEN)
    path = next(project.rglob("REPORT.md"))
    path.chmod(0o644)
    path.write_bytes(path.read_bytes().replace(b"Status: completed", b"Status: failed"))
    mine, here = both(installed, *args)
    assert mine == here
    assert mine[0] == 1
    assert json.loads(mine[1])["errors"] == [PROOF_INVALID]
    for bad in (args[:-2], [*args, "--stage", "return"], ["--help"], ["--all", "--repo", str(project)]):
        mine, here = both(installed, *bad)
        assert mine == here
    assert both(installed, *args[:-2])[0][0] == 2

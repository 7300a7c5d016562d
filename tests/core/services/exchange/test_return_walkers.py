"""A received return runs nothing when the project's own tools walk the project: the real pytest, npm,
make, cargo and pre-commit, run in the project root after a hostile return, run the project's own
code and none of the return's (each piece of code touches a marker file when it runs)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from bench.requests import review
from handoff_core.contract.exchange import Channel
from handoff_core.services.exchange.outbound import package_dispatch
from handoff_core.services.exchange.returns import receive_return
from handoff_core.services.writing.store import Store
from tests.support.archives import zip_of
from tests.support.exchange import NOW
from tests.support.gitrepo import git

pytestmark = pytest.mark.slow


def python_marking(marks: Path, name: str) -> str:
    touch = f"from pathlib import Path\n\nPath({str(marks)!r}, {name!r}).touch()\n"
    return f"{touch}\n\ndef test_marked():\n    pass\n"


def doctest_marking(marks: Path, name: str) -> str:
    return f"Notes.\n\n>>> from pathlib import Path\n>>> Path({str(marks)!r}, {name!r}).touch()\n"


def node_marking(marks: Path, name: str) -> str:
    return f"import {{ writeFileSync }} from 'node:fs';\nwriteFileSync({json.dumps(str(marks / name))}, '');\n"


def rust_marking(marks: Path, name: str) -> str:
    return f'#[test]\nfn marks() {{\n    std::fs::write({json.dumps(str(marks / name))}, "").unwrap();\n}}\n'


def project_files(marks: Path) -> dict[str, str]:
    """A project with the usual tools set up: each runs its own code, which touches an ``own-`` marker."""
    return {
        "pyproject.toml": "[tool.pytest.ini_options]\nminversion = '8'\n",
        "tests/test_own.py": python_marking(marks, "own-pytest"),
        "package.json": '{"name": "proj", "private": true, "scripts": {"test": "node --test"}}\n',
        "test/own.test.mjs": node_marking(marks, "own-node"),
        "Makefile": ".PHONY: test\ntest:\n\t$(PYTHON) -m pytest -q -p no:cacheprovider\n",
        "Cargo.toml": '[package]\nname = "proj"\nversion = "0.1.0"\nedition = "2021"\n',
        "src/lib.rs": "pub fn one() -> u8 {\n    1\n}\n",
        "tests/own.rs": rust_marking(marks, "own-cargo"),
        ".pre-commit-config.yaml": (
            "repos:\n- repo: local\n  hooks:\n  - id: doctest\n    name: doctest\n"
            f"    entry: {sys.executable} -m doctest\n    language: system\n    types: [python]\n"
        ),
    }


def hostile_return(marks: Path) -> bytes:
    """Code each walker would pick up, anywhere in a tree it walks: each touches a ``returned-`` marker."""
    return zip_of(
        ("RETURN.md", b"# Return\ndispatch_id: d1\n"),
        ("candidate/tests/test_x.py", python_marking(marks, "returned-pytest").encode()),
        ("candidate/tests/test_notes.txt", doctest_marking(marks, "returned-doctest-txt").encode()),
        ("candidate/docs/guide.md", doctest_marking(marks, "returned-doctest-md").encode()),
        ("candidate/src/util.py", python_marking(marks, "returned-module").encode()),
        ("candidate/web/x.test.mjs", node_marking(marks, "returned-node").encode()),
        ("candidate/tests/x.rs", rust_marking(marks, "returned-cargo").encode()),
        ("candidate/.pytest.ini", b"[pytest]\naddopts = --doctest-modules\n"),
        ("candidate/.cargo/config.toml", b'[build]\nrustc-wrapper = "rustc-wrapper"\n'),
        ("candidate/postcss.config.js", node_marking(marks, "returned-postcss").encode()),
    )


def tool_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "npm_", "CARGO_TARGET"))}
    return env | {
        "npm_config_cache": str(tmp_path / "npm-cache"),
        "npm_config_update_notifier": "false",
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
        "CARGO_TARGET_DIR": str(tmp_path / "cargo-target"),
        "PYTHONDONTWRITEBYTECODE": "1",
    }


def needs(program: str) -> str:
    found = shutil.which(program, path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    if found is None:
        pytest.skip(f"{program} is not installed here")
    return found


def pytest_collecting() -> list[list[str]]:
    return [[sys.executable, "-m", "pytest", "--co", "-q", "-p", "no:cacheprovider"]]


def pytest_running() -> list[list[str]]:
    doctests = ["--doctest-modules", "--doctest-glob=test*.txt", "--doctest-glob=*.md"]
    return [[sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *doctests]]


def make_test() -> list[list[str]]:
    return [[needs("make"), "test", f"PYTHON={sys.executable}"]]


def npm_test() -> list[list[str]]:
    return [[needs("npm"), "test", "--silent", "--no-audit", "--no-fund"]]


def cargo_test() -> list[list[str]]:
    return [[needs("cargo"), "test", "--offline", "-q"]]


def pre_commit_run() -> list[list[str]]:
    return [[needs("git"), "add", "-A"], [needs("pre-commit"), "run"]]  # on what a commit of everything stages


# Each tool as the Lead runs it in the project root, and the marker the project's own code leaves.
WALKERS: dict[str, tuple[Callable[[], list[list[str]]], str]] = {
    "pytest --co": (pytest_collecting, "own-pytest"),
    "pytest with doctests": (pytest_running, "own-pytest"),
    "make test": (make_test, "own-pytest"),
    "npm test": (npm_test, "own-node"),
    "cargo test": (cargo_test, "own-cargo"),
    "pre-commit run": (pre_commit_run, "own-pytest"),
}


@pytest.mark.parametrize("walker", sorted(WALKERS))
def test_no_returned_code_runs_when_the_projects_tools_walk_the_project(
    store: Store, project: Path, tmp_path: Path, walker: str
) -> None:
    commands, own = WALKERS[walker]
    marks = tmp_path / "marks"
    marks.mkdir()
    for relative, text in project_files(marks).items():
        (project / relative).parent.mkdir(parents=True, exist_ok=True)
        (project / relative).write_text(text)
    git(project, "init", "-q", "-b", "main")
    task = store.queries.read_task(store.create_task(review()).ref)[0]
    package_dispatch(project, task, "s1", "d1", [], Channel(), NOW)
    receive_return(project, "s1", task.task, "d1", "a1", hostile_return(marks), is_text=False)
    outputs = []
    for command in commands():
        done = subprocess.run(
            command, cwd=project, env=tool_env(tmp_path), capture_output=True, text=True, timeout=300, check=False
        )
        outputs.append(f"$ {' '.join(command)} -> {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    ran = sorted(path.name for path in marks.iterdir())
    assert own in ran, f"{walker} did not run the project's own code:\n" + "\n".join(outputs)
    assert [name for name in ran if name.startswith("returned-")] == [], "\n".join(outputs)

"""What the verification tests share: a real repository holding a small package and its pytest tests
(the package's ``add`` is wrong at the base), an anchored store, and a task whose acceptance check is
that real ``pytest`` run."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path

from bench.requests import implementation
from handoff_core.contract.checks import Check
from handoff_core.contract.ids import Ref
from handoff_core.contract.report import Report
from handoff_core.contract.scope import Scope
from handoff_core.services.capabilities.tokens import report_token, task_anchor
from handoff_core.services.writing.dispatch import TaskRequest
from handoff_core.services.writing.store import Store
from tests.support.gitrepo import FOCUS, add_worktree, commit_all, git, write

__all__ = ["PYTEST", "RIGHT", "RIGHT_FILES", "TEST", "WRONG", "Calc", "calc_repo", "make_calc", "pids_running"]

# The acceptance check the tasks are asked to pass: this interpreter's pytest, its cache off.
PYTEST = f"{sys.executable} -m pytest -q -p no:cacheprovider tests"
WRONG = "def add(a, b):\n    return a - b\n"
RIGHT = "def add(a, b):\n    return a + b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
RIGHT_FILES = {"src/calc/__init__.py": RIGHT}
PYPROJECT = '[project]\nname = "calc"\nversion = "0"\n\n[tool.pytest.ini_options]\npythonpath = ["src"]\n'


@dataclass(frozen=True)
class Calc:
    project: Path
    store: Store
    secret: Path  # the Lead's secret: what anchors the TASKs, and what no check may read

    def dispatch(self, *checks: Check, writable: tuple[str, ...] = ("src/**",), branch: str = "task-a") -> Ref:
        """A worktree task asked to pass ``checks`` (the pytest run by default)."""
        tree = add_worktree(self.project, branch)
        scope = Scope(workspace="required", writable=writable, worktree=str(tree), branch=branch)
        return self._create(implementation(scope=scope, checks=checks or (Check(PYTEST),)))

    def _create(self, request: TaskRequest) -> Ref:
        """Published as the Lead's server publishes: anchored, with the signing key its report token seeds."""
        anchor = self.store.queries.anchor
        assert anchor is not None
        return self.store.create_task(replace(request, signing_key=lambda ref: anchor.signing_key(str(ref)))).ref

    def tree(self, ref: Ref) -> Path:
        return Path(self.store.queries.read_task(ref)[0].scope.worktree)

    def current(self, *checks: Check) -> Ref:
        scope = Scope(workspace="current", writable=("src/**",))
        return self._create(implementation(scope=scope, checks=checks or (Check(PYTEST),)))

    def returned(self, ref: Ref, verification: str = "not run here", checkpoint: str | None = None) -> None:
        report = Report(
            session=ref.session,
            task=ref.task,
            status="completed",
            focused=FOCUS,
            artifacts="src/calc/__init__.py",
            verification=verification,
            source_checkpoint=checkpoint,
        )
        token = report_token(self.secret.read_bytes(), self.store.roots.state_root, ref)
        self.store.write_report(report, ref.change, token=token)

    def work(self, ref: Ref, files: dict[str, str], verification: str = "not run here") -> str:
        """The worktree task's work: ``files`` written and committed, its REPORT naming that checkpoint."""
        tree = self.tree(ref)
        for path, text in files.items():
            write(tree, path, text)
        checkpoint = commit_all(tree)
        self.returned(ref, verification, checkpoint)
        return checkpoint


def calc_repo(project: Path) -> None:
    """``project`` as a repository of the package (its ``add`` wrong) and its test, one commit."""
    git(project, "init", "-q", "-b", "main")
    for path, text in {"src/calc/__init__.py": WRONG, "tests/test_calc.py": TEST, "pyproject.toml": PYPROJECT}.items():
        write(project, path, text)
    write(project, ".gitignore", "speculo/\n")
    commit_all(project, "calc")


def make_calc(project: Path, state_root: Path, secret: Path) -> Calc:
    calc_repo(project)
    secret.parent.mkdir(parents=True, exist_ok=True)
    secret.write_bytes(b"lead-secret-" + b"s" * 52)
    store = Store(state_root, project)
    anchor = task_anchor(secret.read_bytes(), state_root, secret)
    store.queries.use_anchor(lambda: anchor)
    return Calc(project, store, secret)


def pids_running(marker: str) -> list[int]:
    """The processes whose command line holds ``marker``."""
    found = []
    for name in os.listdir("/proc"):
        try:
            if name.isdigit() and marker.encode() in Path("/proc", name, "cmdline").read_bytes():
                found.append(int(name))
        except OSError:
            continue
    return found

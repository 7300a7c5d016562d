"""Real git repositories and linked worktrees for the evidence tests."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from bench.evidence import GIT_ENV
from handoff_core.contract.report import Report

FOCUS = "Built A1. Kept the API. Stopped after tests. Next: review."
ENV = GIT_ENV


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, env=ENV, capture_output=True, text=True, timeout=60, check=check)


def write(root: Path, relative: str, text: str = "x\n") -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def make_repo(project: Path) -> None:
    """``project`` as a repository with one commit; its handoff tree is ignored, as a project keeps it."""
    git(project, "init", "-q", "-b", "main")
    for relative in ("src/a1/core.py", "src/b/other.py", "README.md"):
        write(project, relative)
    write(project, ".gitignore", "speculo/\n")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "initial")


def new_repo(parent: Path, name: str = "repo") -> Path:
    """A new folder ``name`` in ``parent``, made a repository by ``make_repo``."""
    root = parent / name
    root.mkdir()
    make_repo(root)
    return root


def add_worktree(project: Path, name: str) -> Path:
    path = project.parent / f"wt-{name}"
    git(project, "worktree", "add", "-q", str(path), "-b", name)
    return path


def commit_all(tree: Path, message: str = "work") -> str:
    git(tree, "add", "-A")
    git(tree, "commit", "-q", "-m", message)
    return git(tree, "rev-parse", "HEAD").stdout.strip()


def report(ref_session: str, ref_task: str, checkpoint: str | None) -> Report:
    return Report(
        session=ref_session,
        task=ref_task,
        status="completed",
        focused=FOCUS,
        artifacts="src/a1/core.py",
        verification="pytest: exit 0",
        source_checkpoint=checkpoint,
    )


def counting_git(folder: Path, log: Path) -> Path:
    """``folder`` holding a ``git`` that logs its arguments to ``log`` and then runs the real one: put
    first on ``PATH``, it counts every git start."""
    real = shutil.which("git")
    assert real is not None
    folder.mkdir()
    wrapper = folder / "git"
    wrapper.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{log}'\nexec '{real}' \"$@\"\n")
    wrapper.chmod(0o755)
    return folder


def started(log: Path) -> list[str]:
    """The git commands a ``counting_git`` logged (the word after the evidence layer's ``--no-pager``)."""
    starts = log.read_text().splitlines() if log.exists() else []
    return [start.partition(" --no-pager ")[2].split(" ")[0] for start in starts]

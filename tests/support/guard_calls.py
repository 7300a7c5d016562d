"""The guard command run as a hook runs it: its events, its commits."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.support.gitrepo import ENV, git, write
from tests.support.wire import SCRIPT


def event(path: Path, cwd: Path) -> str:
    return json.dumps(
        {"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": {"file_path": str(path)}, "cwd": str(cwd)}
    )


def guard(
    project: Path, *args: str, stdin: str = "", cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    command = [str(SCRIPT), "guard", *args, "--project-root", str(project)]
    return subprocess.run(
        command, input=stdin, capture_output=True, text=True, timeout=60, check=False, cwd=cwd, env=env or ENV
    )


def commit(tree: Path, *paths: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    for path in paths:
        write(tree, path, f"changed {path}\n")
        git(tree, "add", path)
    return subprocess.run(
        ["git", "commit", "-q", "-m", "work"],
        cwd=tree,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env or ENV,
    )

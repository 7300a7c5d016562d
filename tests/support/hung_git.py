"""A ``git`` that never answers one command and leaves a child behind, first on ``PATH``: to show that
a git the server runs is stopped at its time bound together with everything it started."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from handoff_core.files import git_process

__all__ = ["alive", "hang_git"]


def hang_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str) -> Path:
    """Put a ``git`` first on ``PATH`` that, for ``command``, starts a child (its pid appended to the
    returned file) and waits forever; the config listing finds nothing; any other command fails as
    outside a repository. The runner's time bound becomes one second."""
    bin_dir, pids = tmp_path / "hung-bin", tmp_path / "hung-pids"
    bin_dir.mkdir()
    script = bin_dir / "git"
    script.write_text(
        "#!/bin/sh\n"
        'case " $* " in *" config "*" --get-regexp "*) exit 1;; esac\n'  # the runner's listing of planted names: none
        f'case " $* " in *" {command} "*) ;; *) echo "fatal: not a git repository" >&2; exit 128;; esac\n'
        "sleep 300 </dev/null >/dev/null 2>&1 &\n"  # the child holds no pipe of ours: only a kill ends it
        f"echo $! >> '{pids}'\n"
        "exec sleep 300\n"
    )
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(git_process, "TIMEOUT", 1.0)
    return pids


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie is dead, waiting for its reaper


def alive(pids: Path, within: float = 10.0) -> list[int]:
    """The children in ``pids`` still running after ``within`` seconds (a kill lands a moment later)."""
    started = [int(line) for line in pids.read_text().split()]
    deadline = time.monotonic() + within
    while (left := [pid for pid in started if _running(pid)]) and time.monotonic() < deadline:
        time.sleep(0.05)  # polled, with a deadline: another process's exit has no event to wait on here
    return left

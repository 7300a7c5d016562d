"""One home per fact of the file system and of git: the state-root lock, the rename over a file and
the starting of git (and of a child interpreter) each stand in one module, which every other site calls."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_STARTS = {"run", "Popen", "call", "check_call", "check_output"}


def _sites(module: str, names: set[str]) -> set[str]:
    """The source files of handoff_core and server that use ``module.<name>`` for any of ``names``."""
    found: set[str] = set()
    for package in ("handoff_core", "server"):
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if (
                    isinstance(node, ast.Attribute)
                    and isinstance(node.value, ast.Name)
                    and node.value.id == module
                    and node.attr in names
                ):
                    found.add(path.relative_to(ROOT).as_posix())
    return found


def test_the_state_root_lock_is_taken_in_one_place() -> None:
    assert _sites("fcntl", {"flock", "lockf"}) == {"handoff_core/files/locking.py"}


def test_a_file_is_renamed_over_another_in_one_place() -> None:
    # git_hooks: a hook is git's file outside the handoff tree, rewritten whole by its own rule
    assert _sites("os", {"replace", "rename"}) == {
        "handoff_core/files/publishing.py",
        "handoff_core/files/git_hooks.py",
    }


def test_git_is_started_in_one_place_and_every_other_process_in_one_other() -> None:
    # interpreter: a child interpreter of this server's own code, nothing else; codex_trust: the one
    # command that asks another program (Codex's app server, which the person runs it for)
    assert _sites("subprocess", _STARTS) == {
        "handoff_core/files/git_process.py",
        "handoff_core/files/interpreter.py",
        "server/cli/codex_trust.py",
    }

"""Serving: the cyclic collector is paused while a server starts, and runs again once it serves."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

import pytest

from server.cli import main
from tests.support.gitrepo import new_repo

# ``run`` stands in for the SDK's loop: it says how the collector stands when serving would begin.
PROBE = """
import gc, sys
from mcp.server.mcpserver import MCPServer
MCPServer.run = lambda self, *args, **kwargs: print(gc.isenabled(), gc.get_freeze_count() > 0)
from server.cli import main
main(["serve", "--role", sys.argv[1], "--project-root", sys.argv[2], "--secret-file", sys.argv[3]])
"""


@pytest.mark.slow  # starts handoff-mcp's serve in a fresh interpreter
@pytest.mark.parametrize("role", ["lead", "executor"])
def test_a_stdio_server_serves_with_the_collector_running_and_its_start_frozen(role: str, tmp_path: Path) -> None:
    project = new_repo(tmp_path, "project")
    command = [sys.executable, "-c", PROBE, role, str(project), str(tmp_path / "secret")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.split() == ["True", "True"]


def test_a_start_refused_before_serving_leaves_the_collector_running(tmp_path: Path) -> None:
    assert gc.isenabled()
    assert main(["serve", "--role", "lead", "--project-root", str(tmp_path / "missing")]) == 2
    assert gc.isenabled()


def test_a_start_stopped_by_a_usage_error_leaves_the_collector_running() -> None:
    with pytest.raises(SystemExit):
        main(["serve", "--role", "neither"])
    assert gc.isenabled()


def test_the_command_stays_a_function_once_its_modules_are_imported() -> None:
    """The console script names ``server.cli:main``: no module of ``server.cli`` may take the name."""
    import server.cli
    import server.cli.command_line  # what importing a module of the package does to its names

    assert callable(server.cli.main)
    assert server.cli.main.__module__ == "server.cli"

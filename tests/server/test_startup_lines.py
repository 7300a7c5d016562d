"""What the long-running commands say when they start: serve on a terminal, the board, the team server."""

from __future__ import annotations

import os
import pty
import socket
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import httpx2
import pytest

from tests.support.gitrepo import make_repo
from tests.support.wire import SCRIPT, serve_command

pytestmark = pytest.mark.slow  # each test starts handoff-mcp


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def started(command: list[str], **streams: object) -> Iterator[subprocess.Popen[str]]:
    """The command running, killed on exit; a watchdog bounds every read of its output."""
    with subprocess.Popen(command, text=True, **streams) as process:  # type: ignore[call-overload]
        watchdog = threading.Timer(60, process.kill)
        watchdog.start()
        try:
            yield process
        finally:
            watchdog.cancel()
            process.kill()


def piped(stream: IO[str] | None) -> IO[str]:
    assert stream is not None  # the command was started with this stream piped
    return stream


def lines_until(stream: IO[str], needle: str) -> str:
    seen = ""
    while needle not in seen and (line := stream.readline()):
        seen += line
    return seen


def test_serve_on_a_terminal_says_what_it_serves_and_that_it_waits(project: Path, secret_file: Path) -> None:
    main, terminal = pty.openpty()
    command = serve_command("lead", project, secret_file)
    try:
        with started(command, stdin=terminal, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) as process:
            said = lines_until(piped(process.stderr), "waiting")  # after what the project lacks (no git here)
    finally:
        os.close(main)
        os.close(terminal)
    assert "waiting for an MCP client on stdin" in said
    assert "lead server" in said
    assert f"project root {project}" in said
    assert f"state root {project / 'speculo' / '.speculo'}" in said


def test_serve_for_a_client_keeps_stderr_quiet(project: Path, secret_file: Path) -> None:
    make_repo(project)
    command = serve_command("lead", project, secret_file)
    done = subprocess.run(command, input="", capture_output=True, text=True, timeout=60, check=False)
    assert done.stderr == ""


def test_a_lead_served_outside_git_says_what_is_missing_and_what_to_do(project: Path, secret_file: Path) -> None:
    command = serve_command("lead", project, secret_file)
    done = subprocess.run(command, input="", capture_output=True, text=True, timeout=60, check=False)
    assert f"git finds no repository at {project}" in done.stderr
    assert "no base" in done.stderr
    assert "git init" in done.stderr
    executor = serve_command("executor", project, secret_file)  # an executor dispatches nothing
    assert subprocess.run(executor, input="", capture_output=True, text=True, timeout=60, check=False).stderr == ""


def test_the_board_prints_its_one_time_url_alone_on_stdout(project: Path, secret_file: Path) -> None:
    port = free_port()
    command = [str(SCRIPT), "board", "--port", str(port), "--project-root", str(project)]
    with started(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
        url = piped(process.stdout).readline().strip()
        assert url.startswith(f"http://127.0.0.1:{port}/board?token=")
        assert "link works once" in piped(process.stderr).readline()
        for _ in range(200):  # bounded: the server binds right after printing
            try:
                answer = httpx2.get(url, follow_redirects=False, timeout=5)
                break
            except httpx2.ConnectError:
                threading.Event().wait(0.05)
        assert answer.status_code == 303


def test_the_team_server_start_up_line_names_the_board(project: Path, secret_file: Path) -> None:
    port = free_port()
    command = [str(SCRIPT), "serve", "--http", "--port", str(port), "--project-root", str(project)]
    command += ["--secret-file", str(secret_file)]
    with started(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) as process:
        said = lines_until(piped(process.stderr), "board:")
    assert f"http://127.0.0.1:{port}/board?token=" in said
    assert "token --lead" in said


def test_the_board_on_port_0_prints_the_port_it_bound_and_serves_there(project: Path, secret_file: Path) -> None:
    command = [str(SCRIPT), "board", "--port", "0", "--project-root", str(project)]
    with started(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
        url = piped(process.stdout).readline().strip()
        port = int(url.removeprefix("http://127.0.0.1:").split("/", 1)[0])
        assert port > 0, url
        answer = httpx2.get(url, follow_redirects=False, timeout=5)  # bound before the URL was printed
    assert answer.status_code == 303


def test_the_board_on_a_port_in_use_says_so_and_what_to_do(project: Path, secret_file: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        command = [str(SCRIPT), "board", "--port", str(port), "--project-root", str(project)]
        done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode != 0
    assert done.stdout == ""  # no login URL for a board that is not there
    assert f"port {port} is in use" in done.stderr
    assert "--port 0" in done.stderr

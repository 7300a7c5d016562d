"""The product's log: stderr only, quiet by default, and never a token or a secret in it."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from handoff_core.errors import ConfigError
from handoff_core.services.tokens import lead_token, load_secret
from server import logs
from server.cli import main
from tests.server.test_tools import FOCUS, task_args

SCRIPT = Path(sys.executable).parent / "handoff-mcp"
INIT = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "logs", "version": "1"}}


def rpc(ident: int, method: str, params: dict[str, Any]) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": params}) + "\n"


def answer(process: subprocess.Popen[str], ident: int) -> dict[str, Any]:
    """The response with ``ident``: stdout carries nothing but JSON-RPC messages."""
    assert process.stdout is not None
    for line in process.stdout:
        message = json.loads(line)  # a log line on stdout would fail here
        if message.get("id") == ident:
            return dict(message)
    raise AssertionError(f"the server closed stdout before answering {ident}")


def round_trip(project: Path, secret_file: Path, *extra: str, env: dict[str, str] | None = None) -> tuple[str, str]:
    """create_task then write_report over stdio; the token used, and everything the server wrote on stderr."""
    command = [
        str(SCRIPT),
        "serve",
        "--role",
        "lead",
        "--project-root",
        str(project),
        "--secret-file",
        str(secret_file),
    ]
    with subprocess.Popen(
        [*command, *extra],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    ) as process:
        assert process.stdin is not None
        try:
            process.stdin.write(rpc(1, "initialize", INIT) + '{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
            process.stdin.write(rpc(2, "tools/call", {"name": "create_task", "arguments": task_args()}))
            process.stdin.flush()
            created = answer(process, 2)["result"]["structuredContent"]
            report = {"ref": created["ref"], "token": created["report_token"], "status": "completed", "focused": FOCUS}
            report |= {"artifacts": "src/a1/x.py", "verification": "pytest: exit 0"}
            process.stdin.write(rpc(3, "tools/call", {"name": "write_report", "arguments": report}))
            process.stdin.flush()
            assert answer(process, 3)["result"]["structuredContent"]["created"]
            _, log = process.communicate(timeout=30)  # closes stdin: the server ends at EOF
        finally:
            process.kill()
    return str(created["report_token"]), log


@pytest.mark.slow
def test_a_full_round_trip_logs_its_publishes_on_stderr_and_no_token_or_secret(
    project: Path, secret_file: Path
) -> None:
    token, log = round_trip(project, secret_file, "--log-level", "debug")
    assert "published TASK.md of 2026-11-30-demo/" in log
    assert "published REPORT.md of 2026-11-30-demo/" in log
    secret = load_secret(secret_file, project)
    for never in (token, secret.hex(), lead_token(secret, project / "speculo" / ".speculo")):
        assert never not in log


@pytest.mark.slow
def test_the_log_is_quiet_by_default_and_the_environment_can_raise_it(project: Path, secret_file: Path) -> None:
    _, quiet = round_trip(project, secret_file)
    assert "published" not in quiet
    _, told = round_trip(project, secret_file, env={"HANDOFF_LOG_LEVEL": "info"})
    assert "published TASK.md" in told


def test_an_unknown_level_is_a_config_error_that_names_the_levels(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HANDOFF_LOG_LEVEL", "loud")
    with pytest.raises(ConfigError) as refused:
        logs.configure()
    assert refused.value.code == "config_error"
    assert main(["status"]) == 2


def test_configuring_twice_leaves_one_handler_per_package() -> None:
    logs.configure("info")
    logs.configure("debug")
    assert [len(logging.getLogger(name).handlers) for name in logs.PACKAGES] == [1, 1]
    assert logging.getLogger("server").level == logging.DEBUG
    logs.configure("warning")

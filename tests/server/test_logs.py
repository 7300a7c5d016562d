"""The product's log: stderr only, quiet by default, and never a token or a secret in it."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from handoff_core.errors import ConfigError
from handoff_core.services.capabilities.tokens import lead_token, load_secret
from server import logs
from server.cli import main
from tests.support.calls import FOCUS, task_args
from tests.support.wire import answer, request, serve_command, stdio_server


def round_trip(project: Path, secret_file: Path, *extra: str, env: dict[str, str] | None = None) -> tuple[str, str]:
    """create_task then write_report over stdio; the token used, and everything the server wrote on stderr."""
    with stdio_server(serve_command("lead", project, secret_file, *extra), env) as process:
        assert process.stdin is not None
        process.stdin.write(request(3, "tools/call", {"name": "create_task", "arguments": task_args()}))
        process.stdin.flush()
        created = answer(process, 3)["result"]["structuredContent"]
        report = {"ref": created["ref"], "token": created["report_token"], "status": "completed", "focused": FOCUS}
        report |= {"artifacts": "src/a1/x.py", "verification": "pytest: exit 0"}
        process.stdin.write(request(4, "tools/call", {"name": "write_report", "arguments": report}))
        process.stdin.flush()
        assert answer(process, 4)["result"]["structuredContent"]["created"]
        _, log = process.communicate(timeout=30)  # closes stdin: the server ends at EOF
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

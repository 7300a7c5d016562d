"""End to end over stdio: the installed console script as a lead and, separately, as an executor."""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from handoff_core.validator import arguments
from tests.support.calls import FOCUS, call, task_args
from tests.support.stdio import params, write_report_call
from tests.support.wire import HANDSHAKE, SCRIPT

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # every test here starts the server or the CLI as a process


async def test_a_lead_and_an_executor_process_complete_a_dispatch(project: Path, secret_file: Path) -> None:
    async with Client(params("lead", project, secret_file)) as lead:
        created = await call(lead, "create_task", **task_args())
    async with Client(params("executor", project, secret_file)) as executor:
        names = {tool.name for tool in (await executor.list_tools()).tools}
        assert "create_task" not in names
        from_message = write_report_call(created["dispatch_message"])
        written = await call(
            executor,
            "write_report",
            status="completed",
            focused=FOCUS,
            artifacts="src/a1/x.py",
            verification="pytest: exit 0",
            **from_message,
        )
        assert written["created"]
    async with Client(params("lead", project, secret_file)) as lead:
        verdict = await call(lead, "validate_handoff", ref=created["ref"], stage="return")
    assert verdict["ok"], verdict["errors"]
    change, session, task = created["ref"].split("/")
    cli = subprocess.run(
        [str(SCRIPT.with_name("handoff-validate")), *arguments(str(project), change, session, task, "return")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert cli.returncode == 0, cli.stdout
    assert json.loads(cli.stdout)["errors"] == []


def test_stdout_carries_only_json_rpc(project: Path, secret_file: Path) -> None:
    requests = [
        *HANDSHAKE,
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "read_task", "arguments": {"ref": "x"}}},
        {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "tools/call",
            "params": {"name": "create_task", "arguments": task_args()},
        },
    ]
    command = [str(SCRIPT), "--role", "lead", "--project-root", str(project), "--secret-file", str(secret_file)]
    with subprocess.Popen(
        command, text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    ) as process:
        assert process.stdin is not None
        assert process.stdout is not None
        watchdog = threading.Timer(60, process.kill)  # bounds every read below
        watchdog.start()
        try:
            process.stdin.write("".join(json.dumps(r) + "\n" for r in requests))
            process.stdin.flush()
            messages: list[dict[str, Any]] = []
            while len([m for m in messages if "id" in m]) < 4 and (line := process.stdout.readline()):
                messages.append(json.loads(line))
            process.stdin.close()
            messages += [json.loads(line) for line in process.stdout if line.strip()]
        finally:
            watchdog.cancel()
            process.kill()
    assert all(m.get("jsonrpc") == "2.0" for m in messages)
    assert sorted(m["id"] for m in messages if "id" in m) == [1, 2, 3, 4]
    errors = {m["id"]: m["result"].get("isError", False) for m in messages if m.get("id") in (3, 4)}
    assert errors == {3: True, 4: False}


def test_serve_without_a_role_exits_with_a_usage_error(project: Path) -> None:
    result = subprocess.run(
        [str(SCRIPT), "--project-root", str(project)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={"PATH": "/usr/bin:/bin", "HOME": str(project)},
    )
    assert result.returncode == 2
    assert "--role" in result.stderr
    assert result.stdout == ""


def test_the_status_command_prints_a_table_with_states_and_slots(project: Path, secret_file: Path) -> None:
    from bench.requests import implementation
    from handoff_core.services.writing.store import Store

    Store(project / "speculo" / ".speculo", project).create_task(implementation())
    result = subprocess.run(
        [str(SCRIPT), "status", "--project-root", str(project)], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    assert "001-implement-a1" in result.stdout
    assert "dispatched" in result.stdout
    assert "free writer slots: 0 without writer_limit; 2 with writer_limit=3" in result.stdout


def test_the_token_command_prints_the_same_token_as_the_dispatch(project: Path, secret_file: Path) -> None:
    from bench.requests import implementation
    from handoff_core.services.capabilities.tokens import load_secret, report_token
    from handoff_core.services.writing.store import Store

    store = Store(project / "speculo" / ".speculo", project)
    load_secret(secret_file)  # made by the Lead's server when it started
    ref = store.create_task(implementation()).ref
    result = subprocess.run(
        [str(SCRIPT), "token", str(ref), "--project-root", str(project), "--secret-file", str(secret_file)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == report_token(load_secret(secret_file), store.roots.state_root, ref)
    missing = subprocess.run(
        [
            str(SCRIPT),
            "token",
            f"{ref.change}/{ref.session}/009-x",
            "--project-root",
            str(project),
            "--secret-file",
            str(secret_file),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert missing.returncode == 2
    assert "task_not_found" in missing.stderr or "no task" in missing.stderr

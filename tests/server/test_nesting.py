"""Arguments nested hundreds of levels deep are answered with invalid_arguments, over stdio and HTTP."""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.support.calls import task_args
from tests.support.team import Team
from tests.support.wire import SCRIPT

pytestmark = pytest.mark.anyio
DEPTHS = [200, 1_000, 100_000]
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}


def nested_call(depth: int, request_id: int = 2) -> str:
    """A tools/call whose ref is a list nested ``depth`` deep (written by hand: json.dumps would recurse)."""
    ref = "[" * depth + '"x"' + "]" * depth
    params = f'{{"name":"read_task","arguments":{{"ref":{ref}}}}}'
    return f'{{"jsonrpc":"2.0","id":{request_id},"method":"tools/call","params":{params}}}'


@pytest.mark.slow
@pytest.mark.parametrize("depth", DEPTHS)
def test_deep_arguments_over_stdio_are_answered_with_invalid_arguments(
    project: Path, secret_file: Path, depth: int
) -> None:
    lines = [
        json.dumps(INIT),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        nested_call(depth),
        json.dumps({"jsonrpc": "2.0", "id": 3, "method": "ping"}),
    ]
    command = [str(SCRIPT), "--role", "executor", "--project-root", str(project), "--secret-file", str(secret_file)]
    pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.DEVNULL}
    with subprocess.Popen(command, text=True, **pipes) as process:  # type: ignore[call-overload]
        watchdog = threading.Timer(30, process.kill)  # bounds every read below
        watchdog.start()
        try:
            process.stdin.write("".join(line + "\n" for line in lines))
            process.stdin.flush()
            answers: dict[int, Any] = {}
            while len(answers) < 3 and (line := process.stdout.readline()):
                message = json.loads(line)
                answers[message.get("id")] = message
        finally:
            watchdog.cancel()
            process.kill()
    assert answers[2]["result"]["isError"] is True
    assert "invalid_arguments" in answers[2]["result"]["content"][0]["text"]
    assert answers[3]["result"] == {}  # and the server goes on serving


@pytest.mark.parametrize("depth", DEPTHS)
async def test_deep_arguments_over_http_are_answered_with_invalid_arguments(team: Team, depth: int) -> None:
    headers = {
        "authorization": f"Bearer {team.lead_token}",
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
    }
    url = team.endpoint.url("lead")
    async with httpx2.AsyncClient(timeout=30) as http:
        opened = await http.post(url, json=INIT, headers=headers)
        session = {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
        await http.post(
            url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers={**headers, **session}
        )
        answer = await http.post(url, content=nested_call(depth).encode(), headers={**headers, **session})
        flat = await http.post(
            url,
            json={
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "create_task", "arguments": task_args()},
            },
            headers={**headers, **session},
        )
    assert answer.status_code == 200
    result = _result(answer)
    assert result["id"] == 2
    assert result["result"]["isError"] is True
    assert "invalid_arguments" in result["result"]["content"][0]["text"]
    assert _result(flat)["result"]["isError"] is False  # an ordinary call in the same session still works


def _result(answer: httpx2.Response) -> dict[str, Any]:
    """The JSON-RPC message of a response, sent as JSON or as one server-sent event."""
    if answer.headers["content-type"].startswith("application/json"):
        return dict(answer.json())
    data = [line[5:].strip() for line in answer.text.splitlines() if line.startswith("data:") and line[5:].strip()]
    return dict(json.loads(data[-1]))

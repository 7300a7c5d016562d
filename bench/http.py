"""The team server over streamable HTTP beside an executor over stdio, alternated call by call.

Both servers are separate processes on the same tree (``handoff-mcp serve --http`` and
``handoff-mcp serve --role executor``), so the difference is the transport. Then fifty executor
sessions report at once, each with its own task's token.
"""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from bench.latency import FOCUS
from bench.stats import paired, summary
from bench.trees import make_change
from handoff_core.services.capabilities.tokens import lead_token, load_secret

CHANGE = "2026-11-30-http"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def bearer_client(token: str) -> httpx2.AsyncClient:
    """An HTTP client carrying ``token`` as its bearer, with the MCP transports' timeouts: a response
    stream may stay open, so reads wait up to 300 s, everything else 30 s."""
    return httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(30, read=300))


@asynccontextmanager
async def _session(url: str, token: str) -> AsyncIterator[Client]:
    async with (
        bearer_client(token) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        yield client


def _report(created: dict[str, Any]) -> dict[str, Any]:
    return {
        "ref": created["ref"],
        "token": created["report_token"],
        "task_sha256": created["task_sha256"],
        "status": "completed",
        "focused": FOCUS,
        "artifacts": "none",
        "verification": "read only",
    }


async def _dispatch(lead: Client, count: int, offset: int) -> list[dict[str, Any]]:
    created = []
    for index in range(count):
        args = {"change": CHANGE, "topic": f"http-{offset + index}", "kind": "review", "goal": "Review.", "inputs": "x"}
        result = await lead.call_tool("create_task", {**args, "acceptance": "findings"})
        assert result.structured_content is not None, result.content
        created.append(result.structured_content)
    return created


async def _timed(call: Any) -> float:
    start = time.perf_counter()
    result = await call()
    assert not result.is_error, result.content
    return time.perf_counter() - start


async def _alternated(base: str, stdio: Client, tasks: list[dict[str, Any]], calls: int) -> dict[str, Any]:
    times: dict[str, list[float]] = {"http_read": [], "stdio_read": [], "http_write": [], "stdio_write": []}
    ref = tasks[0]["ref"]
    async with _session(f"{base}/executor/mcp", tasks[0]["report_token"]) as reader:
        for _ in range(calls):
            times["http_read"].append(await _timed(lambda: reader.call_tool("read_task", {"ref": ref})))
            times["stdio_read"].append(await _timed(lambda: stdio.call_tool("read_task", {"ref": ref})))
    for index in range(calls):
        over_http, over_stdio = _report(tasks[1 + 2 * index]), _report(tasks[2 + 2 * index])
        async with _session(f"{base}/executor/mcp", over_http["token"]) as writer:
            await writer.call_tool("read_task", {"ref": over_http["ref"]})  # warm, as the reader's session is
            times["http_write"].append(await _timed(lambda w=writer, a=over_http: w.call_tool("write_report", a)))
        times["stdio_write"].append(await _timed(lambda a=over_stdio: stdio.call_tool("write_report", a)))
    result: dict[str, Any] = {name: summary(values) for name, values in times.items()}
    result["ratio"] = {name: paired(times[f"http_{name}"], times[f"stdio_{name}"]) for name in ("read", "write")}
    return result


async def _fifty(base: str, tasks: list[dict[str, Any]]) -> dict[str, float]:
    async def one(created: dict[str, Any]) -> None:
        async with _session(f"{base}/executor/mcp", created["report_token"]) as client:
            result = await client.call_tool("write_report", _report(created))
            assert not result.is_error, result.content

    start = time.perf_counter()
    async with anyio.create_task_group() as group:
        for created in tasks:
            group.start_soon(one, created)
    seconds = time.perf_counter() - start
    return {"sessions": len(tasks), "seconds": round(seconds, 3), "reports_per_s": round(len(tasks) / seconds, 1)}


async def _run(project: Path, secret: Path, command: list[str], calls: int) -> dict[str, Any]:
    state_root = project / "speculo" / ".speculo"
    port = _free_port()
    serve = [
        *command,
        "serve",
        "--http",
        "--port",
        str(port),
        "--project-root",
        str(project),
        "--secret-file",
        str(secret),
    ]
    team = subprocess.Popen(serve, stderr=subprocess.PIPE)
    try:
        assert team.stderr is not None
        team.stderr.readline()  # the banner comes before uvicorn binds: wait for the port below
        base = f"http://127.0.0.1:{port}"
        with anyio.fail_after(30):
            while True:
                try:
                    await anyio.connect_tcp("127.0.0.1", port)
                    break
                except OSError:
                    await anyio.sleep(0.02)
        token = lead_token(load_secret(secret), state_root)
        async with _session(f"{base}/lead/mcp", token) as lead:
            tasks = await _dispatch(lead, 1 + 2 * calls, 0)
            fifty = await _dispatch(lead, 50, 1 + 2 * calls)
        executor = [*command, "serve", "--role", "executor", "--project-root", str(project)]
        async with Client(StdioServerParameters(command=executor[0], args=executor[1:])) as stdio:
            result = await _alternated(base, stdio, tasks, calls)
        result["fifty_sessions"] = await _fifty(base, fifty)
        return result
    finally:
        team.terminate()
        team.wait(timeout=30)


def run(work: Path, command: list[str], calls: int) -> dict[str, Any]:
    project = work / "http"
    make_change(project / "speculo" / ".speculo", CHANGE)
    return dict(anyio.run(_run, project, work / "http-secret", command, calls))

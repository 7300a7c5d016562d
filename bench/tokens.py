"""A real executor's ``initialize`` on the team server, alone and while others send it bad tokens.

The team server runs as its own process (``handoff-mcp serve --http``) over a generated tree. The
executor (its own task, dispatched through the Lead) times ``initialize`` on the executor
endpoint: alone (the floor, taken before and after the flood), and while a separate process runs 20 clients that send
``initialize`` with wrong tokens as fast as they can, each from its own loopback address (all of
127/8 is the loopback) as 20 hosts would. Then 1,000 connections trickle their request headers a
byte a second; how many the server still holds past its header deadline is counted.

``python -m bench.tokens flood URL CLIENTS`` is the flood's process: it runs until its stdin
closes, then prints what it was answered.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import httpx2

from bench.http import _free_port, _session
from bench.stats import summary
from bench.trees import CHANGE, generate
from handoff_core.services.capabilities.tokens import lead_token, load_secret
from server.web.connections import HEADER_SECONDS

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
}
HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
FLOOD_CLIENTS = 20


async def _initialize(http: httpx2.AsyncClient, url: str, token: str) -> float:
    start = time.perf_counter()
    answer = await http.post(url, json=INIT, headers={**HEADERS, "authorization": f"Bearer {token}"})
    seconds = time.perf_counter() - start
    assert answer.status_code == 200, answer.status_code
    return seconds


async def _times(url: str, token: str, calls: int) -> list[float]:
    async with httpx2.AsyncClient(timeout=120) as http:  # a starved executor waits: measured, not failed
        await _initialize(http, url, token)  # the connection is open before the clock starts
        return [await _initialize(http, url, token) for _ in range(calls)]


async def _deep(url: str, token: str, depths: tuple[int, ...] = (1_000, 100_000)) -> dict[str, float]:
    """Milliseconds until a tools/call nested ``depth`` deep is answered (invalid_arguments), per depth."""
    headers = {**HEADERS, "authorization": f"Bearer {token}"}
    answered = {}
    async with httpx2.AsyncClient(timeout=60) as http:
        opened = await http.post(url, json=INIT, headers=headers)
        headers |= {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
        await http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
        for depth in depths:
            params = '{"name":"read_task","arguments":{"ref":' + "[" * depth + '"x"' + "]" * depth + "}}"
            body = '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":' + params + "}"
            start = time.perf_counter()
            answer = await http.post(url, content=body.encode(), headers=headers)
            assert "invalid_arguments" in answer.text, answer.text[:200]
            answered[str(depth)] = round((time.perf_counter() - start) * 1000, 2)
    return answered


async def _flood(url: str, clients: int) -> None:
    """Bad tokens from ``clients`` addresses until stdin closes; then the answers' counts on stdout."""
    answers: Counter[str] = Counter()
    answered = [anyio.Event() for _ in range(clients)]

    async def one(index: int) -> None:
        transport = httpx2.AsyncHTTPTransport(local_address=f"127.0.0.{10 + index}")
        async with httpx2.AsyncClient(transport=transport) as http:
            sent = 0
            while True:
                sent += 1
                headers = {**HEADERS, "authorization": f"Bearer bad-{index}-{sent}"}
                try:
                    answers[str((await http.post(url, json=INIT, headers=headers)).status_code)] += 1
                except httpx2.HTTPError as exc:  # the server hung up: count it, keep sending
                    answers[type(exc).__name__] += 1
                answered[index].set()

    async with anyio.create_task_group() as group:
        for index in range(clients):
            group.start_soon(one, index)
        for event in answered:  # every client is sending before the executor's clock starts
            await event.wait()
        print("flooding", flush=True)
        await anyio.to_thread.run_sync(sys.stdin.read)
        group.cancel_scope.cancel()
    print(json.dumps(dict(sorted(answers.items()))), flush=True)


async def _trickle(port: int, connections: int) -> dict[str, Any]:
    """Open ``connections`` that send headers a byte a second; count those still open past the deadline."""
    still_open = 0
    opened = 0

    async def one() -> None:
        nonlocal still_open, opened
        try:
            stream = await anyio.connect_tcp("127.0.0.1", port)
        except OSError:
            return
        opened += 1
        async with stream:
            try:
                await stream.send(f"GET /board HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n".encode())
                with anyio.move_on_after(HEADER_SECONDS + 3):
                    while True:
                        await stream.send(b"X")
                        with anyio.move_on_after(1):
                            await stream.receive()
                still_open += 1  # the server never hung up
            except (anyio.EndOfStream, anyio.BrokenResourceError, OSError):
                pass

    start = time.perf_counter()
    async with anyio.create_task_group() as group:
        for _ in range(connections):
            group.start_soon(one)
    return {
        "connections": connections,
        "opened": opened,
        "open_after_s": HEADER_SECONDS + 3,
        "still_open": still_open,
        "seconds": round(time.perf_counter() - start, 2),
    }


async def _server_ready(port: int) -> None:
    with anyio.fail_after(600):  # a large tree is read whole before the port opens
        while True:
            try:
                await (await anyio.connect_tcp("127.0.0.1", port)).aclose()
                return
            except OSError:
                await anyio.sleep(0.05)


async def _one_size(work: Path, command: list[str], size: int, calls: int, trickling: int) -> dict[str, Any]:
    project = work / f"tokens-{size}"
    state_root = project / "speculo" / ".speculo"
    generate(state_root, size)
    secret = work / "tokens-secret"
    port = _free_port()
    serve = [*command, "serve", "--http", "--port", str(port), "--project-root", str(project), "--secret-file"]
    started = time.perf_counter()
    team = subprocess.Popen([*serve, str(secret)], stderr=subprocess.DEVNULL)
    try:
        await _server_ready(port)
        base = f"http://127.0.0.1:{port}"
        async with _session(f"{base}/lead/mcp", lead_token(load_secret(secret), state_root)) as lead:
            args = {"change": CHANGE, "topic": "tokens", "kind": "review", "goal": "Review.", "inputs": "x"}
            created = (await lead.call_tool("create_task", {**args, "acceptance": "findings"})).structured_content
        assert created is not None
        ready_s = time.perf_counter() - started
        url, token = f"{base}/executor/mcp", created["report_token"]
        idle = await _times(url, token, calls)
        flood = await anyio.open_process([sys.executable, "-m", "bench.tokens", "flood", url, str(FLOOD_CLIENTS)])
        assert flood.stdout is not None
        assert flood.stdin is not None
        await flood.stdout.receive()  # "flooding"
        flooded = await _times(url, token, calls)
        await flood.stdin.aclose()
        with anyio.fail_after(30):
            out = b"".join([chunk async for chunk in flood.stdout])
            await flood.wait()
        answers = json.loads(out.decode().splitlines()[-1])
        idle += await _times(url, token, calls)  # the floor is taken on both sides of the flood
        deep = await _deep(url, token)
        trickle = await _trickle(port, trickling)
        after = await _times(url, token, calls)
    finally:
        team.terminate()
        team.wait(timeout=30)
    floor, loaded = summary(idle), summary(flooded)
    return {
        "tasks": size,
        "ready_s": round(ready_s, 2),
        "idle": floor,
        "flooded": loaded,
        "after_trickle": summary(after),
        "ratio_p50": round(loaded["p50_ms"] / floor["p50_ms"], 2),
        "flood_answers": answers,
        "trickle": trickle,
        "deep_nesting_answered_ms": deep,
    }


def run(work: Path, command: list[str], sizes: list[int], calls: int, trickling: int) -> dict[str, Any]:
    return {str(size): anyio.run(_one_size, work, command, size, calls, trickling) for size in sizes}


if __name__ == "__main__" and sys.argv[1:2] == ["flood"]:
    anyio.run(_flood, sys.argv[2], int(sys.argv[3]))

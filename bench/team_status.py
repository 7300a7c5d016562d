"""The team server's CPU per ``handoff_status`` call as the sessions asking at once grow: 1, 10, 50.

One team server process (``handoff-mcp serve --http``) over a generated tree. The clients run in
up to five processes of their own (``python -m bench.team_status clients URL SESSIONS CALLS``),
each session a real SDK client over streamable HTTP with the Lead's token, so their CPU is not
the server's and one client process does not hold the rest back. A measurement is ``calls`` calls
in all, shared evenly by the clients, all at once; the server's CPU (utime + stime of
``/proc/<pid>/stat``) before and after it, divided by the calls, and the calls per second. Rounds
alternate 1, 10 and 50 clients; the floor is the one client of the same round, and each round's
50/1 and 10/1 ratios are printed.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, Final

import anyio
from mcp import Client

from bench.http import _free_port, _session
from bench.stats import FloorFailed, paired
from bench.tokens import _server_ready
from bench.trees import generate
from handoff_core.services.capabilities.tokens import lead_token, load_secret

CLIENTS: Final = (1, 10, 50)
PROCESSES: Final = 5  # client processes at most: 50 sessions are 5 processes of 10


def server_cpu(pid: int) -> float:
    """Seconds of CPU the process ``pid`` has used so far, in user and kernel mode (its threads included)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _asked(client: Client) -> None:
    result = await client.call_tool("handoff_status", {})
    if result.is_error or not result.structured_content:
        raise FloorFailed(f"handoff_status was refused: {result.content}")


async def _clients(url: str, clients: int, each: int) -> None:
    """One client process: ``clients`` sessions (the token on stdin), warm; "ready"; on a line of
    stdin, ``each`` calls per session at once; "done"."""
    token = (await anyio.to_thread.run_sync(sys.stdin.readline)).strip()
    async with AsyncExitStack() as stack:
        sessions = [await stack.enter_async_context(_session(url, token)) for _ in range(clients)]
        for client in sessions:
            await _asked(client)  # open and warm before the clock starts
        print("ready", flush=True)
        await anyio.to_thread.run_sync(sys.stdin.readline)

        async def ask(client: Client) -> None:
            for _ in range(each):
                await _asked(client)

        async with anyio.create_task_group() as group:
            for client in sessions:
                group.start_soon(ask, client)
        print("done", flush=True)


async def _measure(url: str, token: str, clients: int, calls: int, pid: int) -> tuple[float, float]:
    """(server CPU seconds per call, calls per second) of ``calls`` calls by ``clients`` sessions at once,
    spread over up to ``PROCESSES`` client processes so that the clients keep up with the server."""
    processes = min(clients, PROCESSES)
    each = max(1, calls // clients)
    command = [sys.executable, "-m", "bench.team_status", "clients", url, str(clients // processes), str(each)]
    started = [
        subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) for _ in range(processes)
    ]
    try:
        for process in started:
            _say(process, token)
        for process in started:
            _expect(process, "ready")
        cpu, start = server_cpu(pid), time.perf_counter()
        for process in started:
            _say(process, "go")
        for process in started:
            _expect(process, "done")
        seconds, used = time.perf_counter() - start, server_cpu(pid) - cpu
    finally:
        for process in started:
            process.kill()
            process.communicate(timeout=30)  # reaped, its pipes closed
    if used <= 0:
        raise FloorFailed(f"the team server used no measurable CPU for {each * clients} calls: no figure")
    return used / (each * clients), each * clients / seconds


def _say(process: subprocess.Popen[str], line: str) -> None:
    assert process.stdin is not None
    process.stdin.write(line + "\n")
    process.stdin.flush()


def _expect(process: subprocess.Popen[str], word: str) -> None:
    assert process.stdout is not None
    line = process.stdout.readline().strip()  # a client that fails exits: its stdout ends, the line is empty
    if line != word:
        process.wait(timeout=30)
        raise FloorFailed(f"a client process said {line!r} (exit {process.returncode}), not {word!r}")


def _figures(cpu: list[float], rate: list[float]) -> dict[str, float]:
    return {
        "cpu_ms_per_call_p50": round(statistics.median(cpu) * 1000, 2),
        "cpu_ms_per_call_min": round(min(cpu) * 1000, 2),
        "cpu_ms_per_call_max": round(max(cpu) * 1000, 2),
        "calls_per_s_p50": round(statistics.median(rate), 1),
    }


async def _one_size(work: Path, command: list[str], size: int, calls: int, rounds: int) -> dict[str, Any]:
    project = work / f"team-status-{size}"
    state_root = project / "speculo" / ".speculo"
    generate(state_root, size)
    secret, port = work / "team-status-secret", _free_port()
    serve = [*command, "serve", "--http", "--port", str(port), "--project-root", str(project), "--secret-file"]
    team = subprocess.Popen([*serve, str(secret)], stderr=subprocess.DEVNULL)
    cpu: dict[int, list[float]] = {n: [] for n in CLIENTS}
    rate: dict[int, list[float]] = {n: [] for n in CLIENTS}
    try:
        await _server_ready(port)
        url, token = f"http://127.0.0.1:{port}/lead/mcp", lead_token(load_secret(secret), state_root)
        for _ in range(rounds):
            for clients in CLIENTS:  # alternated: the floor (one client) in every round
                used, per_second = await _measure(url, token, clients, calls, team.pid)
                cpu[clients].append(used)
                rate[clients].append(per_second)
    finally:
        team.terminate()
        team.wait(timeout=30)
    result: dict[str, Any] = {"tasks": size, "calls": calls, "rounds": rounds}
    result |= {str(n): _figures(cpu[n], rate[n]) for n in CLIENTS}
    result |= {f"ratio_{n}_1": paired(cpu[n], cpu[1]) for n in CLIENTS[1:]}
    return result


def run(work: Path, command: list[str], sizes: list[int], calls: int, rounds: int) -> dict[str, Any]:
    return {str(size): anyio.run(_one_size, work, command, size, calls, rounds) for size in sizes}


if __name__ == "__main__" and sys.argv[1:2] == ["clients"]:
    anyio.run(_clients, sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))

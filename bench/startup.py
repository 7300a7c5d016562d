"""Start-up (spawn -> initialize -> tools/list) and tools/list size, ours beside a minimal MCPServer.

Two times a round: to the ``initialize`` answer (the server is up: a client counts it connected) and
to the ``tools/list`` answer (its tools are there: an agent's first turn can call them).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

from bench.stats import FloorFailed, paired, summary

HERE = Path(__file__).resolve().parent
HANDSHAKE = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
]


def commands(project: Path, secret: Path) -> dict[str, list[str]]:
    ours = [sys.executable, "-m", "server", "serve", "--project-root", str(project), "--secret-file", str(secret)]
    return {
        "lead": [*ours, "--role", "lead"],
        "executor": [*ours, "--role", "executor"],
        # -P: the script's folder is not put first on sys.path, where bench/http.py would shadow the
        # standard ``http`` package and the floor would die on import.
        "minimal": [sys.executable, "-P", str(HERE / "minimal_server.py")],
    }


class Handshake(NamedTuple):
    initialize: float  # seconds from spawn to the initialize answer
    tools_list: float  # seconds from spawn to the tools/list answer
    size: int  # bytes of the tools/list result


def handshake(command: list[str], cwd: Path) -> Handshake:
    """Seconds from spawn to the initialize and tools/list answers, and that answer's result size in bytes.

    A server that ends, or answers with an error or no tools, fails the bench: its time would be the time to crash."""
    start = time.perf_counter()
    initialized = 0.0
    with subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=cwd, text=True
    ) as process:
        assert process.stdin is not None
        assert process.stdout is not None
        process.stdin.write("".join(json.dumps(m) + "\n" for m in HANDSHAKE))
        process.stdin.flush()
        answer: dict[str, object] = {}
        for line in process.stdout:
            message = json.loads(line)
            if message.get("id") == 1:
                initialized = time.perf_counter() - start
            if message.get("id") == 2:
                answer = message
                break
        elapsed = time.perf_counter() - start
        process.stdin.close()
        process.wait(timeout=30)
    result = answer.get("result")
    if not isinstance(result, dict) or not result.get("tools") or not initialized:
        raise FloorFailed(f"{' '.join(command)} gave no tools/list (exit {process.returncode}): {answer or 'nothing'}")
    return Handshake(initialized, elapsed, len(json.dumps(result, separators=(",", ":"), ensure_ascii=False).encode()))


def run(project: Path, secret: Path, runs: int) -> dict[str, object]:
    """Alternate the three servers so that machine noise falls on all of them alike; each round's
    ratio is ours over the minimal server of that round, to its initialize and its tools/list answer."""
    cmds = commands(project, secret)
    times: dict[str, list[Handshake]] = {name: [] for name in cmds}
    for _ in range(runs):
        for name, command in cmds.items():
            times[name].append(handshake(command, project))
    result: dict[str, object] = {name: summary([h.tools_list for h in values]) for name, values in times.items()}
    result["initialize"] = {name: summary([h.initialize for h in values]) for name, values in times.items()}
    floor = times["minimal"]
    for role in ("lead", "executor"):
        result[f"ratio_{role}"] = paired([h.tools_list for h in times[role]], [h.tools_list for h in floor])
        result[f"ratio_{role}_initialize"] = paired([h.initialize for h in times[role]], [h.initialize for h in floor])
    result["tools_list_bytes"] = {name: values[-1].size for name, values in times.items()}
    return result

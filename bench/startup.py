"""Start-up (spawn -> initialize -> tools/list) and tools/list size, ours beside a minimal MCPServer."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from bench.stats import summary

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
        "minimal": [sys.executable, str(HERE / "minimal_server.py")],
    }


def handshake(command: list[str], cwd: Path) -> tuple[float, int]:
    """Seconds from spawn to the tools/list answer, and that answer's result size in bytes."""
    start = time.perf_counter()
    with subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=cwd, text=True
    ) as process:
        assert process.stdin is not None
        assert process.stdout is not None
        process.stdin.write("".join(json.dumps(m) + "\n" for m in HANDSHAKE))
        process.stdin.flush()
        size = 0
        for line in process.stdout:
            message = json.loads(line)
            if message.get("id") == 2:
                size = len(json.dumps(message["result"], separators=(",", ":"), ensure_ascii=False).encode())
                break
        elapsed = time.perf_counter() - start
        process.stdin.close()
        process.wait(timeout=30)
    return elapsed, size


def run(project: Path, secret: Path, runs: int) -> dict[str, object]:
    """Alternate the three servers so that machine noise falls on all of them alike."""
    cmds = commands(project, secret)
    times: dict[str, list[float]] = {name: [] for name in cmds}
    sizes: dict[str, int] = {}
    for _ in range(runs):
        for name, command in cmds.items():
            elapsed, size = handshake(command, project)
            times[name].append(elapsed)
            sizes[name] = size
    result: dict[str, object] = {name: summary(values) for name, values in times.items()}
    minimal = summary(times["minimal"])["p50_ms"]
    result["ratio_lead"] = round(summary(times["lead"])["p50_ms"] / minimal, 3)
    result["ratio_executor"] = round(summary(times["executor"])["p50_ms"] / minimal, 3)
    result["tools_list_bytes"] = {"lead": sizes["lead"], "executor": sizes["executor"], "minimal": sizes["minimal"]}
    return result

"""Start-up (spawn -> initialize -> tools/list) and tools/list size, ours beside a minimal MCPServer."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

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


def handshake(command: list[str], cwd: Path) -> tuple[float, int]:
    """Seconds from spawn to the tools/list answer, and that answer's result size in bytes.

    A server that ends, or answers with an error or no tools, fails the bench: its time would be the time to crash."""
    start = time.perf_counter()
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
            if message.get("id") == 2:
                answer = message
                break
        elapsed = time.perf_counter() - start
        process.stdin.close()
        process.wait(timeout=30)
    result = answer.get("result")
    if not isinstance(result, dict) or not result.get("tools"):
        raise FloorFailed(f"{' '.join(command)} gave no tools/list (exit {process.returncode}): {answer or 'nothing'}")
    return elapsed, len(json.dumps(result, separators=(",", ":"), ensure_ascii=False).encode())


def run(project: Path, secret: Path, runs: int) -> dict[str, object]:
    """Alternate the three servers so that machine noise falls on all of them alike; each round's
    ratio is ours over the minimal server of that round."""
    cmds = commands(project, secret)
    times: dict[str, list[float]] = {name: [] for name in cmds}
    sizes: dict[str, int] = {}
    for _ in range(runs):
        for name, command in cmds.items():
            elapsed, size = handshake(command, project)
            times[name].append(elapsed)
            sizes[name] = size
    result: dict[str, object] = {name: summary(values) for name, values in times.items()}
    result["ratio_lead"] = paired(times["lead"], times["minimal"])
    result["ratio_executor"] = paired(times["executor"], times["minimal"])
    result["tools_list_bytes"] = {"lead": sizes["lead"], "executor": sizes["executor"], "minimal": sizes["minimal"]}
    return result

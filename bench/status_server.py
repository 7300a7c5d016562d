"""A stdio Lead server as the status benchmark drives it: started with a cache of its own, asked
one tool call at a time, measured from outside (CPU, peak memory), stopped as a client stops it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.startup import HANDSHAKE
from bench.stats import FloorFailed
from bench.trees import secret_of

__all__ = ["answered", "ask", "cpu_seconds", "peak_of", "started", "stopped"]


def ask(
    server: subprocess.Popen[bytes], ident: int, tool: str = "handoff_status", arguments: dict[str, Any] | None = None
) -> tuple[float, dict[str, Any], int]:
    """One tool call over stdio (handoff_status by default): seconds from the request to its whole reply
    line, its structured answer, and that line's bytes."""
    assert server.stdin is not None
    assert server.stdout is not None
    call = {
        "jsonrpc": "2.0",
        "id": ident,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments or {}},
    }
    start = time.perf_counter()
    server.stdin.write(json.dumps(call).encode() + b"\n")
    server.stdin.flush()
    for line in server.stdout:
        message = json.loads(line)
        if message.get("id") == ident:
            seconds = time.perf_counter() - start
            result = message.get("result") or {}
            if result.get("isError") or "structuredContent" not in result:
                raise FloorFailed(f"{tool} over stdio failed: {str(message)[:300]}")
            return seconds, result["structuredContent"], len(line)
    raise FloorFailed("the stdio server closed before answering handoff_status")


def started(state_root: Path, cache: Path) -> subprocess.Popen[bytes]:
    """A stdio Lead server on ``state_root`` with ``cache`` as this user's cache, started and listed."""
    project = state_root.parent
    command = [sys.executable, "-m", "server", "serve", "--role", "lead", "--project-root", str(project)]
    command += ["--state-root", str(state_root), "--secret-file", str(secret_of(state_root))]
    env = {**os.environ, "HANDOFF_CACHE_DIR": str(cache)}
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=project, env=env)
    assert server.stdin is not None
    server.stdin.write("".join(json.dumps(m) + "\n" for m in HANDSHAKE).encode())
    server.stdin.flush()
    answered(server, 2)  # started and listed: what follows times the answers alone
    return server


def stopped(server: subprocess.Popen[bytes]) -> None:
    """Stop a stdio server as a client does (its input closed), killed only if it does not end."""
    assert server.stdin is not None
    try:
        server.stdin.close()
        server.wait(timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        server.kill()
        server.wait()


def answered(server: subprocess.Popen[bytes], ident: int) -> dict[str, Any]:
    assert server.stdout is not None
    for line in server.stdout:
        message = json.loads(line)
        if message.get("id") == ident:
            return dict(message)
    raise FloorFailed(f"the stdio server closed before answering request {ident}")


def cpu_seconds(pid: int) -> float:
    """CPU seconds of a process and of the children it has reaped (user and system, clock ticks)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return sum(int(field) for field in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def peak_of(pid: int) -> float:
    """Another process's high-water mark of resident memory, in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    raise FloorFailed(f"no peak resident memory (VmHWM) for process {pid}")

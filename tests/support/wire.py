"""A server process spoken to on stdio line by line, as a client does, with every read bounded."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench.startup import HANDSHAKE

__all__ = ["HANDSHAKE", "SCRIPT", "answer", "request", "serve_command", "stdio_server"]

SCRIPT = Path(sys.executable).parent / "handoff-mcp"
READ_BOUND_S = 60  # a server that stops answering is killed, so a read never waits past this


def serve_command(role: str, project: Path, secret_file: Path, *extra: str) -> list[str]:
    return [
        str(SCRIPT),
        "serve",
        "--role",
        role,
        "--project-root",
        str(project),
        "--secret-file",
        str(secret_file),
        *extra,
    ]


def request(ident: int, method: str, params: dict[str, Any] | None = None) -> str:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": ident, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message) + "\n"


@contextmanager
def stdio_server(command: list[str], env: dict[str, str] | None = None) -> Iterator[subprocess.Popen[str]]:
    """The server, its handshake sent (initialize is id 1, tools/list id 2); killed on the way out."""
    with subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    ) as process:
        watchdog = threading.Timer(READ_BOUND_S, process.kill)
        watchdog.start()
        try:
            assert process.stdin is not None
            process.stdin.write("".join(json.dumps(m) + "\n" for m in HANDSHAKE))
            process.stdin.flush()
            yield process
        finally:
            watchdog.cancel()
            process.kill()


def answer(process: subprocess.Popen[str], ident: int) -> dict[str, Any]:
    """The response with ``ident``: stdout carries nothing but JSON-RPC messages."""
    assert process.stdout is not None
    for line in process.stdout:
        message = json.loads(line)  # a log line on stdout would fail here
        if message.get("id") == ident:
            return dict(message)
    raise AssertionError(f"the server closed stdout before answering {ident}")

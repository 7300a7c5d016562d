"""Serving an ASGI app under uvicorn on a free loopback port inside the caller's event loop.

Tests and benchmarks need a real socket and a bounded wait for start-up; this is their one copy.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import uvicorn

__all__ = ["loopback_listener", "served"]


def loopback_listener() -> socket.socket:
    """A listening socket on a free loopback port: bound first, so the app can be told its own port."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    return listener


@asynccontextmanager
async def served(app: Any, listener: socket.socket, start_timeout: float = 10.0, **config: Any) -> AsyncIterator[str]:
    """Serve `app` on `listener` until the block ends; yields the base URL once uvicorn has started.

    ``config`` goes to ``uvicorn.Config`` (the team server's ``connections.UVICORN``, say)."""
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, **config))
    async with anyio.create_task_group() as group:
        group.start_soon(server.serve, [listener])
        with anyio.fail_after(start_timeout):
            while not server.started:
                await anyio.sleep(0.005)
        try:
            yield f"http://127.0.0.1:{listener.getsockname()[1]}"
        finally:
            server.should_exit = True

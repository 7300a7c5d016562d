"""What the team server takes from a connection before the SDK sees a request: its headers
within a deadline (and the uvicorn settings that hold it), its body bounded and, nested too
deep, marked (``server.mcp.nesting``).

uvicorn times out an idle keep-alive connection, but not one that is still sending its headers:
a peer that trickles a byte a second keeps a connection (and its file descriptor) forever, and a
thousand of them keep a thousand. ``HeaderDeadline`` is uvicorn's own h11 protocol with one
addition: from the moment a connection opens, or a new request begins on it, its headers must
be complete within ``HEADER_SECONDS``, or the connection is closed.
"""

from __future__ import annotations

import asyncio
from typing import Any, Final

import anyio
import h11
from mcp.server.auth.provider import TokenVerifier
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from handoff_core.layout import MAX_FILE_BYTES
from server.mcp.nesting import MAX_NESTING, bounded

__all__ = ["HEADER_SECONDS", "KEEP_ALIVE_SECONDS", "MAX_BODY", "UVICORN", "BoundedNesting", "HeaderDeadline"]

# The largest handoff file, JSON-escaped inside a tools/call (escapes can double it), with room to spare.
MAX_BODY: Final = 2 * MAX_FILE_BYTES

HEADER_SECONDS: Final = 10.0  # from the first byte of a request (or the connection) to its last header
KEEP_ALIVE_SECONDS: Final = 5  # uvicorn's default, said here so the docs and the bench read it


class HeaderDeadline(H11Protocol):
    """uvicorn's h11 protocol, closing a connection whose request headers are not in on time."""

    seconds: float = HEADER_SECONDS
    _deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is h11.IDLE:  # still before (or inside) a request's headers
            if self._deadline is None:
                self._arm()
        else:
            self._disarm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._disarm()  # idle now: uvicorn's keep-alive timeout takes over until the next byte

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._deadline = self.loop.call_later(self.seconds, self._expired)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expired(self) -> None:
        self._deadline = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()


# What every uvicorn serving the team server gets (``run_team``; the tests and the bench too).
UVICORN: Final[dict[str, Any]] = {"http": HeaderDeadline, "timeout_keep_alive": KEEP_ALIVE_SECONDS}


class BoundedNesting:
    """ASGI middleware: a POST body goes through ``nesting.bounded`` before the SDK parses it.

    Only a caller whose bearer ``verifier`` accepts gets its body scanned (the SDK answers anyone
    else 401 as ever), so a stranger cannot make the server walk 8 MiB of brackets. A body over
    ``MAX_BODY`` is passed on as it came, for the SDK to refuse (413).
    """

    def __init__(self, app: ASGIApp, verifier: TokenVerifier) -> None:
        self.app, self.verifier = app, verifier

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size, more, first = 0, True, None
        while more and size <= MAX_BODY:
            message = await receive()
            if message["type"] != "http.request":
                first = message  # the client left: say so to the app, in order
                break
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            more = message.get("more_body", False)
        body = b"".join(chunks)
        if (
            not more
            and first is None
            and body.count(b"[") + body.count(b"{") > MAX_NESTING
            and await self._known(scope)
        ):
            body = await anyio.to_thread.run_sync(bounded, body)  # a long scan stays off the event loop
        replay: list[Message] = [{"type": "http.request", "body": body, "more_body": more}]
        if first is not None:
            replay.append(first)

        async def replayed() -> Message:
            return replay.pop(0) if replay else await receive()

        await self.app(scope, replayed, send)

    async def _known(self, scope: Scope) -> bool:
        header = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
        scheme, _, token = header.partition(" ")
        return scheme.lower() == "bearer" and await self.verifier.verify_token(token) is not None

"""How long a client may take to send its request headers, and the uvicorn settings that hold it.

uvicorn times out an idle keep-alive connection, but not one that is still sending its headers:
a peer that trickles a byte a second keeps a connection (and its file descriptor) forever, and a
thousand of them keep a thousand. ``HeaderDeadline`` is uvicorn's own h11 protocol with one
addition: from the moment a connection opens, or a new request begins on it, its headers must
be complete within ``HEADER_SECONDS``, or the connection is closed.
"""

from __future__ import annotations

import asyncio
from typing import Any, Final

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["HEADER_SECONDS", "KEEP_ALIVE_SECONDS", "UVICORN", "HeaderDeadline"]

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

"""One request and its answer between the sandbox's broker and the clients in its sandbox: a JSON
object each way, length-framed, bounded in size and, the whole exchange, in time.

A sandboxed process may make no Unix socket (``files.seccomp``: one would reach every service the
user runs), so the broker listens on TCP at the loopback address, on a port its launch lets the
sandbox reach, and answers only a request that carries its key. Its address is
``127.0.0.1:PORT#KEY`` (``layout.BROKER_VARIABLE``), handed to the sandbox alone: another task's
sandbox cannot read its environment, and another user cannot read either. Stdlib only: the hook
process loads this, and the launch (which imports ``json`` and ``socket`` only when it talks).
"""

from __future__ import annotations

import struct
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    import socket

__all__ = [
    "KEY_FIELD",
    "MAX_MESSAGE",
    "SocketUnanswered",
    "ask",
    "broker_address",
    "parse_address",
    "read_message",
    "write_message",
]

MAX_MESSAGE = 16 * 1024 * 1024  # a REPORT's text is at most 4 MiB; its JSON, escaped, fits well inside
_FRAME = struct.Struct(">I")
_HOST = "127.0.0.1"
KEY_FIELD = "key"  # the request's field holding the broker's key


class SocketUnanswered(OSError):
    """No well-formed answer came back: refused, closed, too large, too late, or not JSON."""


def broker_address(port: int, key: str) -> str:
    return f"{_HOST}:{port}#{key}"


def parse_address(address: str) -> tuple[int, str]:
    """The port and key of a broker's address; ``SocketUnanswered`` for anything else."""
    where, _, key = address.partition("#")
    host, _, port = where.rpartition(":")
    if host != _HOST or not port.isdigit() or not 0 < int(port) < 65536 or len(key) < 32:  # noqa: PLR2004
        raise SocketUnanswered(f"{address[:80]!r} is not a broker's address ({_HOST}:PORT#KEY)")
    return int(port), key


def _read_exactly(conn: socket.socket, size: int, deadline: float) -> bytes:
    chunks, left = [], size
    while left:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise SocketUnanswered("the message did not arrive in time")
        conn.settimeout(remaining)
        chunk = conn.recv(min(left, 1 << 20))
        if not chunk:
            raise SocketUnanswered("the other side closed the socket mid-message")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_message(conn: socket.socket, timeout: float) -> dict[str, object]:
    """One message, whole within ``timeout`` seconds however slowly its bytes come."""
    import json

    deadline = time.monotonic() + timeout
    (size,) = _FRAME.unpack(_read_exactly(conn, _FRAME.size, deadline))
    if size > MAX_MESSAGE:
        raise SocketUnanswered(f"a message of {size} bytes is over the {MAX_MESSAGE}-byte bound")
    try:
        value = json.loads(_read_exactly(conn, size, deadline))
    except (ValueError, RecursionError) as exc:
        raise SocketUnanswered("the message is not JSON") from exc
    if not isinstance(value, dict):
        raise SocketUnanswered("the message is not a JSON object")
    return value


def write_message(conn: socket.socket, value: dict[str, object]) -> None:
    import json

    data = json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")
    if len(data) > MAX_MESSAGE:
        raise SocketUnanswered(f"a message of {len(data)} bytes is over the {MAX_MESSAGE}-byte bound")
    conn.sendall(_FRAME.pack(len(data)) + data)


def ask(address: str, request: dict[str, object], timeout: float) -> dict[str, object]:
    """``request`` sent to the broker at ``address`` with its key; its answer, within ``timeout`` seconds."""
    import socket

    port, key = parse_address(address)
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as conn:  # a numeric address: no resolver
            conn.settimeout(timeout)
            conn.connect((_HOST, port))
            write_message(conn, request | {KEY_FIELD: key})
            return read_message(conn, timeout)
    except SocketUnanswered:
        raise
    except (OSError, struct.error) as exc:
        raise SocketUnanswered(f"the broker at {_HOST}:{port} did not answer ({exc})") from exc

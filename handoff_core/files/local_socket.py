"""One request and its answer over a local (Unix) socket: a JSON object each way, length-framed,
bounded in size and in time. The sandbox's broker answers on one; the executor's server and hooks
inside the sandbox ask on it. Stdlib only: the hook process loads this.
"""

from __future__ import annotations

import json
import socket
import struct

__all__ = ["MAX_MESSAGE", "SocketUnanswered", "ask", "read_message", "write_message"]

MAX_MESSAGE = 16 * 1024 * 1024  # a REPORT's text is at most 4 MiB; its JSON, escaped, fits well inside
_FRAME = struct.Struct(">I")


class SocketUnanswered(OSError):
    """No well-formed answer came back: refused, closed, too large, too late, or not JSON."""


def _read_exactly(conn: socket.socket, size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = conn.recv(min(left, 1 << 20))
        if not chunk:
            raise SocketUnanswered("the other side closed the socket mid-message")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_message(conn: socket.socket) -> dict[str, object]:
    (size,) = _FRAME.unpack(_read_exactly(conn, _FRAME.size))
    if size > MAX_MESSAGE:
        raise SocketUnanswered(f"a message of {size} bytes is over the {MAX_MESSAGE}-byte bound")
    try:
        value = json.loads(_read_exactly(conn, size))
    except (ValueError, RecursionError) as exc:
        raise SocketUnanswered("the message is not JSON") from exc
    if not isinstance(value, dict):
        raise SocketUnanswered("the message is not a JSON object")
    return value


def write_message(conn: socket.socket, value: dict[str, object]) -> None:
    data = json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")
    if len(data) > MAX_MESSAGE:
        raise SocketUnanswered(f"a message of {len(data)} bytes is over the {MAX_MESSAGE}-byte bound")
    conn.sendall(_FRAME.pack(len(data)) + data)


def ask(path: str, request: dict[str, object], timeout: float) -> dict[str, object]:
    """``request`` sent to the socket at ``path``; its answer, within ``timeout`` seconds."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(timeout)
            conn.connect(path)
            write_message(conn, request)
            return read_message(conn)
    except SocketUnanswered:
        raise
    except (OSError, struct.error) as exc:
        raise SocketUnanswered(f"the socket {path} did not answer ({exc})") from exc

"""A team server that answers every request with the same bytes, as its own process: to show what a
guard does with an answer that is garbled, oversized, cut short, or never comes.

``python -m tests.support.canned_http ANSWER_FILE COUNT_FILE`` listens on a loopback port it prints,
reads each request's head and body (by its Content-Length), appends a line to ``COUNT_FILE``, and
answers with ``ANSWER_FILE``'s bytes, then closes; an empty ``ANSWER_FILE`` means no answer at all
(the connection is held open until the client gives up).
"""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

__all__ = ["Canned", "canned_server", "read_task_answer"]


class Canned:
    """A running canned server: its URL, the file its answer is read from, and how many requests it had."""

    def __init__(self, url: str, answer: Path, count: Path) -> None:
        self.url, self.answer, self.count_file = url, answer, count

    def answers(self, data: bytes) -> None:
        self.answer.write_bytes(data)

    @property
    def requests(self) -> int:
        return len(self.count_file.read_text().splitlines()) if self.count_file.exists() else 0


def read_task_answer(text: str, *, extra_headers: str = "") -> bytes:
    """A well-formed HTTP answer to ``read_task`` holding ``text`` as the TASK."""
    result = {"content": [{"type": "text", "text": "{}"}], "structuredContent": {"text": text}}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "result": result}).encode()
    head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n{extra_headers}\r\n"
    return head.encode() + body


@contextlib.contextmanager
def canned_server(folder: Path) -> Iterator[Canned]:
    """A canned server in its own process, stopped (and waited for) on the way out."""
    answer, count = folder / "canned-answer", folder / "canned-count"
    answer.write_bytes(b"")
    command = [sys.executable, "-m", "tests.support.canned_http", str(answer), str(count)]
    root = Path(__file__).resolve().parents[2]
    child = subprocess.Popen(command, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        assert child.stdout is not None
        port = int(child.stdout.readline())
        yield Canned(f"http://127.0.0.1:{port}/executor/mcp", answer, count)
    finally:
        child.kill()
        child.wait(timeout=30)
        if child.stdout is not None:
            child.stdout.close()


def _request(conn: socket.socket) -> None:
    """Read one request whole: its head, then as many body bytes as it says."""
    data = b""
    while b"\r\n\r\n" not in data and (chunk := conn.recv(65536)):
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    size = next(
        (int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")), 0
    )
    while len(body) < size and (chunk := conn.recv(65536)):
        body += chunk


def _serve(answer: Path, count: Path) -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    print(listener.getsockname()[1], flush=True)
    held = []
    while True:
        conn, _ = listener.accept()
        _request(conn)
        with count.open("a") as counted:
            counted.write("request\n")
        data = answer.read_bytes()
        if not data:
            held.append(conn)  # never answered: the client's time bound ends it
            continue
        with contextlib.suppress(OSError):
            conn.sendall(data)
        conn.close()


if __name__ == "__main__":
    _serve(Path(sys.argv[1]), Path(sys.argv[2]))

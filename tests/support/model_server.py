"""What both scripted model endpoints share: a threaded HTTP server on 127.0.0.1, a script of turns,
and a record of every request body.

A turn is a list of blocks (text, tool calls), or a function of the request body returning one (a
turn that depends on what the CLI sent back, e.g. a tool result). When the script runs out the
model says it is done and calls nothing, so a CLI always ends.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

__all__ = ["Block", "ModelServer", "Recorded", "Text", "ToolCall", "Turn", "Until"]

MAX_BODY = 64 * 1024 * 1024


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: dict[str, Any]
    call_id: str = field(default_factory=lambda: f"call_{uuid.uuid4().hex[:20]}")
    namespace: str | None = None  # a Responses tool namespace (Codex lists an MCP server's tools in one)


Block = Text | ToolCall


@dataclass(frozen=True)
class Until:
    """A turn that waits: while ``ready(body)`` is false the model answers ``meanwhile`` (e.g. a call to
    wait for a still-connecting MCP server) and the script does not advance."""

    ready: Callable[[dict[str, Any]], bool]
    then: Sequence[Block] | Callable[[dict[str, Any]], Sequence[Block]]
    meanwhile: Sequence[Block]
    limit: int = 20  # a CLI that never gets ready still ends: after this many waits, ``then`` is sent


Turn = Sequence[Block] | Callable[[dict[str, Any]], Sequence[Block]] | Until


@dataclass(frozen=True)
class Recorded:
    path: str
    body: dict[str, Any]
    main: bool


class ModelServer:
    """Start with ``with Model(script) as model:``; ``model.url`` is the base URL to give the CLI."""

    def __init__(self, script: Sequence[Turn]) -> None:
        self.script = list(script)
        self.requests: list[Recorded] = []
        self.served = 0  # main-loop turns answered from the script
        self.waited = 0  # turns answered with an ``Until``'s meanwhile
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> ModelServer:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    @property
    def main_requests(self) -> list[dict[str, Any]]:
        return [r.body for r in self.requests if r.main]

    # -- what each API defines -----------------------------------------------------------------

    def is_main(self, path: str, body: dict[str, Any]) -> bool:
        raise NotImplementedError

    def stream(self, path: str, body: dict[str, Any], blocks: Sequence[Block]) -> Iterator[bytes]:
        raise NotImplementedError

    def content_type(self, path: str) -> str:
        return "text/event-stream"

    def get(self, path: str) -> dict[str, Any] | None:
        """A GET's JSON answer, or None for 404."""
        return None

    # -- the turn a request gets -----------------------------------------------------------------

    def _turn(self, path: str, body: dict[str, Any]) -> Sequence[Block]:
        main = self.is_main(path, body)
        with self._lock:
            self.requests.append(Recorded(path, body, main))
            if not main:
                return [Text("ok")]
            done: list[Block] = [Text("Done.")]
            turn = self.script[self.served] if self.served < len(self.script) else done
            if isinstance(turn, Until) and not turn.ready(body) and self.waited < turn.limit:
                self.waited += 1
                return turn.meanwhile
            self.served += 1
        if isinstance(turn, Until):
            turn = turn.then
        return turn(body) if callable(turn) else turn

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                with model._lock:
                    model.requests.append(Recorded(self.path, {}, main=False))
                answer = model.get(self.path)
                data = json.dumps(answer if answer is not None else {"error": "not found"}).encode()
                self.send_response(200 if answer is not None else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                length = min(int(self.headers.get("Content-Length") or 0), MAX_BODY)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw) if raw else {}
                except ValueError:
                    body = {"unparsed": raw[:200].decode(errors="replace")}
                blocks = model._turn(self.path, body if isinstance(body, dict) else {})
                data = b"".join(model.stream(self.path, body, blocks))
                self.send_response(200)
                self.send_header("Content-Type", model.content_type(self.path))
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler

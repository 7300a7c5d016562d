"""The handoff board: a read-only live page for the person supervising the team.

Entry is by a URL that carries a one-time login token (as Jupyter prints one): the first visit
trades it for a session cookie (HttpOnly, SameSite=Strict) and the token is spent. There is no
other way in; on the HTTP team server the Lead's token opens it instead. The page is one static
HTML file with a script beside it (no build step). It writes untrusted text with ``textContent``
only, and its Content-Security-Policy allows no inline script, so a REPORT holding ``<script>``
is shown, never run. A REPORT or RELEASE appearing in the tree reaches open pages through
server-sent events from a ``watchfiles`` watcher, within the watcher's debounce (0.2 s).
"""

from __future__ import annotations

import errno
import hmac
import json
import secrets
import socket
from collections import Counter
from collections.abc import AsyncIterator, Callable
from importlib import resources
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Route

from handoff_core.contract.ids import parse_ref
from handoff_core.errors import ConfigError, HandoffError, InvalidInput, NotFound
from server.web.auth import Endpoint, HostPolicy
from server.web.board_model import PAGE, BoardModel
from server.web.watcher import Changes, watch_board

__all__ = ["MAX_STREAMS", "BoardAccess", "Changes", "board_app", "run_board", "standalone"]

COOKIE = "handoff_board"
MAX_STREAMS = 4  # live pages (server-sent event streams) one board login may hold open at once
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
_STATIC = {"board.js": "text/javascript", "board.css": "text/css"}


class BoardAccess:
    """Who may see the board: one-time login tokens, or a standing token, traded for session cookies."""

    def __init__(self, standing: str | None = None) -> None:
        self._once: set[str] = set()
        self._standing = standing
        self._sessions: set[str] = set()
        self.streams: Counter[str] = Counter()  # session -> event streams open

    def login_token(self) -> str:
        token = secrets.token_urlsafe(24)
        self._once.add(token)
        return token

    def trade(self, token: str) -> str | None:
        """A new session for a valid token; a one-time token works once."""
        if token in self._once:
            self._once.discard(token)
        elif not (self._standing and hmac.compare_digest(token.encode(), self._standing.encode())):
            return None
        session = secrets.token_urlsafe(32)
        self._sessions.add(session)
        return session

    def admits(self, request: Request) -> bool:
        return request.cookies.get(COOKIE, "") in self._sessions


def _asset(name: str) -> str:
    return resources.files("server.web").joinpath("board_static", name).read_text(encoding="utf-8")


def _secured(response: Response) -> Response:
    response.headers["Content-Security-Policy"] = CSP
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers["Cache-Control"] = "no-store"
    return response


def _refused(exc: HandoffError) -> Response:
    """The board's one translation of a core refusal: its code and message as JSON, with an HTTP status."""
    status = 404 if isinstance(exc, NotFound) else 400 if isinstance(exc, InvalidInput) else 409
    return JSONResponse({"error": f"{exc.code}: {exc.message}", "code": exc.code}, status_code=status)


def _guarded(access: BoardAccess, handler: Callable[[Request], Any]) -> Callable[[Request], Any]:
    async def endpoint(request: Request) -> Response:
        if not access.admits(request):
            return _secured(PlainTextResponse("open the board with the URL handoff-mcp printed", status_code=401))
        try:
            return _secured(await handler(request))
        except HandoffError as exc:
            return _secured(_refused(exc))

    return endpoint


def _offset(request: Request) -> int:
    given = request.query_params.get("offset", "") or "0"
    if not (given.isascii() and given.isdigit()):
        raise InvalidInput(f"offset {given!r} is not a whole number: page with the offset the board's last page gave")
    return int(given)


def board_app(model: BoardModel, access: BoardAccess, changes: Changes, prefix: str = "/board") -> list[Route]:
    """The board's routes, under ``prefix``."""

    async def page(request: Request) -> Response:
        token = request.query_params.get("token")
        if token is not None:
            session = access.trade(token)
            if session is None:
                return _secured(PlainTextResponse("this login link was used already or is wrong", status_code=401))
            response = RedirectResponse(prefix, status_code=303)  # the token leaves the address bar
            response.set_cookie(COOKIE, session, httponly=True, samesite="strict", path=prefix)
            return _secured(response)
        if not access.admits(request):
            return _secured(PlainTextResponse("open the board with the URL handoff-mcp printed", status_code=401))
        html = _asset("board.html").replace("{prefix}", prefix)
        return _secured(Response(html, media_type="text/html; charset=utf-8"))

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in _STATIC:
            return PlainTextResponse("not found", status_code=404)
        return Response(_asset(name), media_type=_STATIC[name])

    async def summary(request: Request) -> Response:
        return JSONResponse(await anyio.to_thread.run_sync(model.summary))

    async def tasks(request: Request) -> Response:
        change = request.query_params.get("change", "")
        return JSONResponse(await anyio.to_thread.run_sync(model.page, change, _offset(request), PAGE))

    async def task(request: Request) -> Response:
        ref = parse_ref(request.query_params.get("ref", ""))
        return JSONResponse(await anyio.to_thread.run_sync(model.detail, ref))

    async def events(request: Request) -> Response:
        session = request.cookies.get(COOKIE, "")
        if access.streams[session] >= MAX_STREAMS:
            text = f"at most {MAX_STREAMS} live board pages per login; close one, or open the board again"
            return PlainTextResponse(text, status_code=429)
        access.streams[session] += 1

        async def stream() -> AsyncIterator[str]:
            try:
                yield f"data: {json.dumps({'version': model.version})}\n\n"
                while not await request.is_disconnected():
                    with anyio.move_on_after(15) as quiet:  # never yield inside the scope: an async generator
                        await changes.wait()
                    # A comment line on a quiet stream keeps proxies from closing it.
                    idle = quiet.cancelled_caught
                    yield ": idle\n\n" if idle else f"data: {json.dumps({'version': model.version})}\n\n"
            finally:
                access.streams[session] -= 1

        return StreamingResponse(stream(), media_type="text/event-stream")

    return [
        Route(prefix, page),
        Route(f"{prefix}/static/{{name}}", static),
        Route(f"{prefix}/api/summary", _guarded(access, summary)),
        Route(f"{prefix}/api/tasks", _guarded(access, tasks)),
        Route(f"{prefix}/api/task", _guarded(access, task)),
        Route(f"{prefix}/events", _guarded(access, events)),
    ]


def standalone(model: BoardModel, access: BoardAccess, port: int) -> Starlette:
    """The board on its own (``handoff-mcp board``) on a loopback ``port``, with its watcher in the lifespan."""
    from contextlib import asynccontextmanager

    changes = Changes()

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        stop = anyio.Event()
        async with anyio.create_task_group() as group:
            await group.start(watch_board, model, changes, stop)
            try:
                yield
            finally:
                stop.set()

    loopback = Endpoint("127.0.0.1", port)  # a page on another name or port (DNS rebinding) is refused
    middleware = [Middleware(HostPolicy, loopback.hosts(), loopback.origins())]
    return Starlette(routes=board_app(model, access, changes), lifespan=lifespan, middleware=middleware)


def _listener(port: int) -> socket.socket:
    """A listening socket on the loopback ``port`` (0: a free one), bound before any URL is printed."""
    listener = socket.socket()
    try:
        listener.bind(("127.0.0.1", port))
        listener.listen()
    except (OSError, OverflowError) as exc:
        listener.close()
        if isinstance(exc, OSError) and exc.errno == errno.EADDRINUSE:
            raise ConfigError(f"port {port} is in use: pick another with --port, or --port 0 for a free one") from exc
        raise ConfigError(f"cannot listen on 127.0.0.1 port {port} ({exc}): pick another with --port") from exc
    return listener


def run_board(model: BoardModel, port: int) -> None:
    """Serve the board on the loopback until interrupted; print the one-time login URL with the port
    it bound (``port`` 0 picks a free one)."""
    import sys

    import uvicorn

    listener = _listener(port)
    bound = int(listener.getsockname()[1])
    access = BoardAccess()
    url = f"http://127.0.0.1:{bound}/board?token={access.login_token()}"
    # The URL alone on stdout, for a script to read; what it is goes to stderr.
    print(f"handoff board for {model.queries.roots.state_root}; the link works once:", file=sys.stderr, flush=True)
    print(url, flush=True)
    config = uvicorn.Config(standalone(model, access, bound), log_level="warning", access_log=False)
    uvicorn.Server(config).run(sockets=[listener])

"""The team server: one process over streamable HTTP, the only writer of a project's handoff tree.

Two endpoints, each the SDK's own streamable HTTP app guarded by the SDK's bearer-token auth
(a ``TokenVerifier``) and its transport security (Host and Origin checks, bounded bodies):

``/lead/mcp``      every Lead tool; the bearer is the Lead token (``handoff-mcp token --lead``).
``/executor/mcp``  the executor tools, scoped to one task: the bearer is that task's report token,
                   and the session reads that task and writes its REPORT, nothing else.
``/executor/stop`` the Stop hook of an executor elsewhere, with the same bearer: whether its session
                   may end, the count and the record kept here (``stops``).

A missing or wrong token gets 401 with ``WWW-Authenticate``; a bad Host 421, a bad Origin 403;
an address past its allowance of refused tokens 429. Who may call is decided in ``auth``. One
watcher of the tree (``watcher``) feeds the board, the arrivals and the token index.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from mcp.server.auth.provider import TokenVerifier
from mcp.server.auth.settings import AuthSettings
from mcp.server.subscriptions import InMemorySubscriptionBus
from pydantic import AnyHttpUrl
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import Mount

from handoff_core.services.capabilities.token_index import TokenIndex
from handoff_core.services.capabilities.tokens import lead_token, load_secret
from server.config import ROLES, Role, Settings, TeamOptions
from server.mcp.app import HttpOptions, build_server
from server.mcp.arrivals import Arrivals
from server.mcp.services import open_store
from server.web.auth import REFUSALS, Endpoint, HostPolicy, LeadVerifier, RefusalLimit, TaskVerifier
from server.web.board import BoardAccess, board_app
from server.web.board_model import BoardModel
from server.web.connections import MAX_BODY, UVICORN, BoundedNesting
from server.web.stops import stop_route
from server.web.watcher import Batch, BoardFeed, Changes, TreeWatcher

__all__ = ["MAX_BODY", "IndexFeed", "proxy_headers", "run_team", "team_app"]


class IndexFeed:
    """The token index's part of the watcher: built on the first whole batch, then told each change."""

    def __init__(self, index: TokenIndex) -> None:
        self.index = index

    async def __call__(self, batch: Batch, whole: bool) -> None:
        from watchfiles import Change

        if whole and not batch:  # start-up, or events lost: every task not yet known is read
            await anyio.to_thread.run_sync(self.index.build)
        if changed := [(kind == Change.deleted, Path(path)) for kind, path in batch]:
            await anyio.to_thread.run_sync(self.index.follow, changed)


def team_app(
    settings: Settings,
    endpoint: Endpoint,
    *,
    refusals: tuple[int, float] = REFUSALS,
    watch: Callable[..., AsyncIterator[Batch]] | None = None,
) -> Starlette:
    """The Starlette app serving both endpoints, with the tree's watcher in its lifespan.

    ``refusals`` is each client address's allowance of refused tokens (at once, then per second);
    ``watch`` stands in for ``watchfiles.awatch`` (see ``TreeWatcher``).
    """
    secret = load_secret(settings.secret_file, settings.project_root)
    arrivals = Arrivals(settings.state_root)
    queries = open_store(settings, anchored=True).queries
    board = BoardModel(queries, settings.writer_cap)
    board_changes = Changes()
    index = TokenIndex(settings.state_root)
    verifiers: dict[Role, TokenVerifier] = {
        "lead": LeadVerifier(lead_token(secret, settings.state_root)),
        "executor": TaskVerifier(index),
    }
    watcher = TreeWatcher(
        settings.state_root, [BoardFeed(board, board_changes), arrivals.observe, IndexFeed(index)], watch=watch
    )
    servers, mounts = [], []
    for role in ROLES:
        bus = InMemorySubscriptionBus()
        auth = AuthSettings(
            issuer_url=AnyHttpUrl(endpoint.base),
            resource_server_url=AnyHttpUrl(endpoint.url(role)),
            validate_token_resource=False,  # our verifiers bind a token to this project themselves
        )
        http = HttpOptions(
            auth=auth,
            token_verifier=verifiers[role],
            bus=bus,
            executor_url=endpoint.url("executor"),
            on_dispatch=index.learn,
            events=watcher.events,
            middleware=(arrivals.middleware(bus),),
        )
        server = build_server(settings.as_role(role), http)
        app = server.streamable_http_app(
            streamable_http_path="/mcp", transport_security=endpoint.security(), max_request_body_size=MAX_BODY
        )
        servers.append(server)
        mounts.append(Mount(f"/{role}", app=BoundedNesting(app, verifiers[role])))

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        stop = anyio.Event()
        async with AsyncExitStack() as stack:
            for server in servers:
                await stack.enter_async_context(server.session_manager.run())
            async with anyio.create_task_group() as group:
                await group.start(watcher.run, stop)
                try:
                    yield
                finally:
                    stop.set()

    # The board, behind the Lead's token: /board?token=<lead token> opens a session.
    # An executor's Stop hook asks here (before the executor mount, which would take the path).
    stops = stop_route(queries, settings.state_root, verifiers["executor"])
    board_routes = board_app(board, BoardAccess(standing=lead_token(secret, settings.state_root)), board_changes)
    routes = [*board_routes, stops, *mounts]
    return Starlette(
        routes=routes,
        lifespan=lifespan,
        middleware=[
            Middleware(HostPolicy, endpoint.hosts(), endpoint.origins()),
            Middleware(RefusalLimit, refusals, verifiers=tuple(verifiers.values())),
        ],
    )


def proxy_headers(options: TeamOptions) -> dict[str, Any]:
    """uvicorn's proxy settings: ``X-Forwarded-For`` believed only from the proxy addresses given
    (a direct client naming itself in the header would otherwise pick the address it is limited by)."""
    addresses = list(options.proxy_addresses) if options.behind_proxy else []
    return {"proxy_headers": bool(addresses), "forwarded_allow_ips": addresses or None}


def run_team(settings: Settings, options: TeamOptions) -> None:
    """Serve the team until interrupted (uvicorn, with its own TLS when certificates are given)."""
    import sys

    import uvicorn

    endpoint = Endpoint(options.host, options.port, options.scheme, options.public_url)
    app = team_app(settings, endpoint)
    print(
        f"handoff-mcp team server for {settings.state_root}\n"
        f"  lead:      {endpoint.url('lead')}  (bearer: handoff-mcp token --lead)\n"
        f"  executors: {endpoint.url('executor')}  (bearer: the task's report token)\n"
        f"  board:     {endpoint.base}/board?token=LEAD_TOKEN  (the Lead's token, from handoff-mcp token --lead)",
        file=sys.stderr,
        flush=True,
    )
    config = uvicorn.Config(
        app,
        host=options.host,
        port=options.port,
        ssl_certfile=options.tls_cert,
        ssl_keyfile=options.tls_key,
        log_level="warning",
        access_log=False,  # request lines carry no tokens, but there is no need to keep them either
        **proxy_headers(options),
        **UVICORN,  # a header-read deadline beside the keep-alive timeout
    )
    uvicorn.Server(config).run()

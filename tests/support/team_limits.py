"""A team server served with limits."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from bench.loopback import loopback_listener, served
from handoff_core.services.capabilities.tokens import lead_token, load_secret
from server.config import Settings
from server.web.auth import Endpoint
from server.web.connections import UVICORN
from server.web.team import team_app
from tests.support.team import Team


@asynccontextmanager
async def serving(
    project: Path,
    state_root: Path,
    secret_file: Path,
    uvicorn: dict[str, Any] | None = None,
    public_url: str | None = None,
    **options: Any,
) -> AsyncIterator[Team]:
    """A team server as ``run_team`` serves it (``connections.UVICORN``, or ``uvicorn``)."""
    listener = loopback_listener()
    endpoint = Endpoint("127.0.0.1", listener.getsockname()[1], public_url=public_url)
    app = team_app(
        Settings(role="lead", project_root=project, state_root=state_root, secret_file=secret_file), endpoint, **options
    )
    async with served(app, listener, **(UVICORN if uvicorn is None else uvicorn)):
        yield Team(endpoint, lead_token(load_secret(secret_file), state_root), state_root)

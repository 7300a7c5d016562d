"""The HTTP team server served for a test, its Lead and executors, a dispatch and a report."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from bench.http import bearer_client
from server.config import Role
from server.web.auth import Endpoint
from tests.support.calls import FOCUS, call, task_args

REPORT = {"status": "completed", "focused": FOCUS, "artifacts": "src/a1/x.py", "verification": "pytest: exit 0"}


async def dispatch(team: Team, **overrides: Any) -> dict[str, Any]:
    async with team.lead() as lead:
        return await call(lead, "create_task", **task_args(**overrides))


def report_args(created: dict[str, Any]) -> dict[str, Any]:
    return {"ref": created["ref"], "token": created["report_token"], "task_sha256": created["task_sha256"], **REPORT}


@asynccontextmanager
async def transport(url: str, token: str) -> AsyncIterator[Any]:
    """The SDK's streamable HTTP transport with a bearer token; the HTTP client is closed with it."""
    async with (
        bearer_client(token) as http,
        streamable_http_client(url, http_client=http) as streams,
    ):
        yield streams


@dataclass
class Team:
    endpoint: Endpoint
    lead_token: str
    state_root: Path

    def client(self, role: Role, token: str, **options: Any) -> Client:
        return Client(transport(self.endpoint.url(role), token), **options)

    def lead(self, **options: Any) -> Client:
        return self.client("lead", self.lead_token, **options)

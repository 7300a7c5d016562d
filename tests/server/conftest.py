from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer

from server.config import Role, Settings
from server.mcp.app import build_server
from tests.support.changes import make_change


@pytest.fixture
def secret_file(tmp_path: Path) -> Path:
    return tmp_path / "config" / "secret"


@pytest.fixture
def settings_for(project: Path, state_root: Path, secret_file: Path, tmp_path: Path) -> Callable[[Role], Settings]:
    def make(role: Role) -> Settings:
        return Settings(
            role=role,
            project_root=project,
            state_root=state_root,
            secret_file=secret_file,
            cache_dir=tmp_path / "cache",
        )

    return make


@pytest.fixture(params=["legacy", "auto"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def lead_server(settings_for: Callable[[str], Settings]) -> MCPServer:
    return build_server(settings_for("lead"))


@pytest.fixture
def executor_server(settings_for: Callable[[str], Settings]) -> MCPServer:
    return build_server(settings_for("executor"))


@pytest.fixture
async def lead(lead_server: MCPServer, mode: str) -> AsyncIterator[Client]:
    async with Client(lead_server, mode=mode) as client:
        yield client


@pytest.fixture
async def executor(executor_server: MCPServer, mode: str) -> AsyncIterator[Client]:
    async with Client(executor_server, mode=mode) as client:
        yield client


__all__ = ["make_change"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"

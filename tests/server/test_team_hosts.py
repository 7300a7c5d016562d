"""Host and Origin on the team server, over real HTTP: exact host:port, exact origins, the board too."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx2
import pytest

from tests.support.team import Team
from tests.support.team_limits import serving

pytestmark = pytest.mark.anyio
PUBLIC = "https://team.example"
PATHS = ("/lead/mcp", "/executor/mcp", "/board", "/board/api/summary")
REFUSED_HOSTS = (
    "127.0.0.1:{port}@evil.example",
    "127.0.0.1:{other}",
    "localhost:{other}",
    "[::1]:{other}",
    "evil.example:{port}",
    "127.0.0.1",
    "team.example.evil",
)
SERVED_HOSTS = ("127.0.0.1:{port}", "localhost:{port}", "[::1]:{port}", "team.example", "team.example:443")
REFUSED_ORIGINS = (
    "http://127.0.0.1:{other}",
    "http://localhost:{other}",
    "http://evil.example",
    "https://team.example:8443",
    "null",
)
SERVED_ORIGINS = ("http://127.0.0.1:{port}", "http://localhost:{port}", "http://[::1]:{port}", PUBLIC)


@pytest.fixture
async def team(project: Path, state_root: Path, secret_file: Path) -> AsyncIterator[Team]:
    async with serving(project, state_root, secret_file, public_url=PUBLIC) as team:
        yield team


async def answers(team: Team, spellings: tuple[str, ...], header: str) -> dict[tuple[str, str], int]:
    """The status of each path asked for with each spelling of ``header``."""
    port = team.endpoint.port
    sent = {"authorization": f"Bearer {team.lead_token}", "content-type": "application/json"}
    sent["accept"] = "application/json, text/event-stream"
    found = {}
    async with httpx2.AsyncClient() as http:
        for spelling in spellings:
            value = spelling.format(port=port, other=port + 1)
            for path in PATHS:
                url = f"http://127.0.0.1:{port}{path}"
                if path.startswith("/board"):
                    response = await http.get(url, headers={header: value})
                else:
                    body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
                    response = await http.post(url, json=body, headers={**sent, header: value})
                found[spelling, path] = response.status_code
    return found


async def test_a_host_that_is_not_exactly_this_server_is_refused_on_every_route(team: Team) -> None:
    found = await answers(team, REFUSED_HOSTS, "host")
    assert {key: status for key, status in found.items() if status != 421} == {}


async def test_this_servers_own_names_are_served(team: Team) -> None:
    found = await answers(team, SERVED_HOSTS, "host")
    assert {key: status for key, status in found.items() if status in (421, 403)} == {}


async def test_an_origin_that_is_not_exactly_this_server_is_refused_on_every_route(team: Team) -> None:
    found = await answers(team, REFUSED_ORIGINS, "origin")
    assert {key: status for key, status in found.items() if status != 403} == {}


async def test_this_servers_own_origins_are_served(team: Team) -> None:
    found = await answers(team, SERVED_ORIGINS, "origin")
    assert {key: status for key, status in found.items() if status in (421, 403)} == {}

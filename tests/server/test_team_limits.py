"""The team server against hostile peers, over real HTTP: refused tokens, addresses, the watcher."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from bench.requests import review
from handoff_core.services.capabilities.tokens import load_secret, report_token, token_check
from handoff_core.services.writing.store import Store
from server.config import TeamOptions
from server.web.auth import REFUSALS
from server.web.connections import UVICORN, HeaderDeadline
from server.web.team import proxy_headers
from tests.support.calls import call
from tests.support.team import Team, dispatch
from tests.support.team_limits import serving

pytestmark = pytest.mark.anyio
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}

_walks: list[str] = []
_counting: list[bool] = []  # non-empty while a test counts


def _count_walks(event: str, args: tuple[Any, ...]) -> None:
    if _counting and event in ("os.listdir", "os.scandir"):
        _walks.append(event)


sys.addaudithook(_count_walks)  # a hook cannot be removed: it counts only while a test asks


async def initialize(http: httpx2.AsyncClient, url: str, token: str) -> int:
    answer = await http.post(url, json=INIT, headers={**HEADERS, "authorization": f"Bearer {token}"})
    return answer.status_code


def from_address(address: str) -> httpx2.AsyncClient:
    """A client whose connections leave from another loopback address (all of 127/8 is the loopback)."""
    return httpx2.AsyncClient(transport=httpx2.AsyncHTTPTransport(local_address=address))


async def test_a_refused_token_costs_no_walk_of_the_tree(team: Team) -> None:
    created = await dispatch(team)
    url = team.endpoint.url("executor")
    async with httpx2.AsyncClient() as http:
        assert await initialize(http, url, created["report_token"]) == 200  # the index is built
        _walks.clear()
        _counting.append(True)
        try:
            answers = [await initialize(http, url, f"not-a-token-{n}") for n in range(REFUSALS[0] - 5)]
        finally:
            _counting.clear()
    assert set(answers) == {401}
    assert _walks == []


async def test_refused_tokens_from_one_address_are_limited_and_other_addresses_are_not(
    project: Path, state_root: Path, secret_file: Path
) -> None:
    burst = 10
    async with serving(project, state_root, secret_file, refusals=(burst, 1 / 3600)) as team:
        created = await dispatch(team)
        url = team.endpoint.url("executor")
        async with from_address("127.0.0.2") as guesser, from_address("127.0.0.3") as executor:
            answers = [await initialize(guesser, url, f"guess-{n}") for n in range(burst + 2)]
            limited = await guesser.post(url, json=INIT, headers={**HEADERS, "authorization": "Bearer x"})
            assert await initialize(executor, url, created["report_token"]) == 200
            assert await initialize(executor, url, "one-wrong-token") == 401
    assert answers == [401] * burst + [429] * 2
    assert limited.status_code == 429
    assert int(limited.headers["retry-after"]) >= 1
    assert "guess" not in limited.text


async def test_a_valid_token_is_answered_beside_refused_ones_from_the_same_address(
    project: Path, state_root: Path, secret_file: Path, mode: str
) -> None:
    burst = 10
    async with serving(project, state_root, secret_file, refusals=(burst, 1 / 3600)) as team:
        created = await dispatch(team)
        url = team.endpoint.url("executor")
        async with httpx2.AsyncClient() as guesser:  # the same address as the executor: 127.0.0.1
            answers = [await initialize(guesser, url, f"guess-{n}") for n in range(burst + 1)]
            valid = [await initialize(guesser, url, created["report_token"]) for _ in range(8)]
            again = await initialize(guesser, url, "guess-again")
        async with team.client("executor", created["report_token"], mode=mode) as executor:
            task = await call(executor, "read_task", ref=created["ref"])
        async with team.lead(mode=mode) as lead:
            status = await call(lead, "handoff_status")
    assert answers == [401] * burst + [429]
    assert valid == [200] * 8
    assert again == 429
    assert task["task_sha256"] == created["task_sha256"]
    assert status["tasks"]


async def test_a_wrong_token_retried_from_many_addresses_is_limited_as_one_credential(
    project: Path, state_root: Path, secret_file: Path
) -> None:
    burst = 5
    async with serving(project, state_root, secret_file, refusals=(burst, 1 / 3600)) as team:
        url = team.endpoint.url("executor")
        answers = []
        for n in range(burst + 2):
            async with from_address(f"127.0.1.{n + 1}") as http:
                answers.append(await initialize(http, url, "the-same-wrong-token"))
    assert answers == [401] * burst + [429] * 2


async def test_behind_a_proxy_forwarded_addresses_are_believed_only_from_the_proxy(
    project: Path, state_root: Path, secret_file: Path
) -> None:
    burst = 5
    options = TeamOptions(behind_proxy=True, proxy_addresses=("127.0.0.9",))
    config = {**UVICORN, **proxy_headers(options)}
    async with serving(project, state_root, secret_file, uvicorn=config, refusals=(burst, 1 / 3600)) as team:
        url = team.endpoint.url("executor")

        async def guess(http: httpx2.AsyncClient, forwarded: str, n: int) -> int:
            headers = {**HEADERS, "authorization": f"Bearer guess-{n}", "x-forwarded-for": forwarded}
            return (await http.post(url, json=INIT, headers=headers)).status_code

        async with from_address("127.0.0.1") as direct:
            rotating = [await guess(direct, f"10.0.0.{n + 1}", n) for n in range(burst + 2)]
        async with from_address("127.0.0.9") as proxy:
            first = [await guess(proxy, "10.1.0.1", n) for n in range(burst + 1)]
            other = await guess(proxy, "10.1.0.2", 99)
    assert rotating == [401] * burst + [429] * 2
    assert first == [401] * burst + [429]
    assert other == 401


async def test_a_task_dispatched_by_another_writer_opens_once_the_watcher_has_seen_it(
    team: Team, project: Path, secret_file: Path
) -> None:
    await dispatch(team)  # the index is built before the other writer's task exists
    secret = load_secret(secret_file)
    store = Store(team.state_root, project)
    request = review("review-b2")
    request = type(request)(
        change=request.change,
        topic=request.topic,
        body=request.body,
        token_check=lambda ref: token_check(report_token(secret, team.state_root, ref)),
    )
    stored = await anyio.to_thread.run_sync(store.create_task, request)
    token = report_token(secret, team.state_root, stored.ref)
    async with httpx2.AsyncClient() as http:
        with anyio.fail_after(10):  # a bounded wait for the watcher's batch
            while await initialize(http, team.endpoint.url("executor"), token) != 200:
                await anyio.sleep(0.05)


@pytest.fixture
async def polled_team(project: Path, state_root: Path, secret_file: Path) -> AsyncIterator[Team]:
    """A team server whose kernel has no inotify watches left when its watcher starts."""
    from watchfiles import awatch

    def no_watches_left(*paths: Any, force_polling: bool = False, **options: Any) -> Any:
        if not force_polling:
            raise OSError(28, "OS file watch limit reached.")
        return awatch(*paths, force_polling=True, **options)

    async with serving(project, state_root, secret_file, watch=no_watches_left) as team:
        yield team


async def test_out_of_watches_the_team_server_polls_and_says_so(polled_team: Team, caplog: Any) -> None:
    created = await dispatch(polled_team, kind="review", workspace="", writable=[])
    async with polled_team.lead() as lead:
        status = await call(lead, "handoff_status", view="all")
    assert status["events"].startswith("polled")
    assert any("polling" in record.getMessage() for record in caplog.get_records("setup"))
    change, session, task = created["ref"].split("/")
    folder = polled_team.state_root / "specdev" / "changes" / change / "sessions" / session / task
    board = f"{polled_team.endpoint.base}/board"
    async with httpx2.AsyncClient() as http:
        await http.get(f"{board}?token={polled_team.lead_token}")
        before = (await http.get(f"{board}/api/summary")).json()["changes"]
        (folder / "REPORT.md").write_text(f"# 任务回报\n\nSession: {session}\nTask: {task}\nStatus: blocked\n")
        with anyio.fail_after(10):  # the next walk of the tree sees the hand-written REPORT
            while (await http.get(f"{board}/api/summary")).json()["changes"] == before:
                await anyio.sleep(0.05)


async def trickle(stream: Any) -> None:
    """A byte every 0.1 s, until the server hangs up."""
    while True:
        await stream.send(b"X")
        with anyio.move_on_after(0.1):
            await stream.receive()


class QuickDeadline(HeaderDeadline):
    seconds = 0.5


async def test_a_connection_that_trickles_its_headers_is_closed_at_the_deadline(
    project: Path, state_root: Path, secret_file: Path
) -> None:
    async with serving(project, state_root, secret_file, {**UVICORN, "http": QuickDeadline}) as team:
        port = team.endpoint.port
        async with (
            await anyio.connect_tcp("127.0.0.1", port) as idle,
            await anyio.connect_tcp("127.0.0.1", port) as slow,
        ):
            await slow.send(f"GET /board HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n".encode())
            with anyio.fail_after(5), pytest.raises((anyio.EndOfStream, anyio.BrokenResourceError)):
                await trickle(slow)
            with anyio.fail_after(5), pytest.raises(anyio.EndOfStream):
                await idle.receive()  # a connection that never sent a byte is closed too
        async with httpx2.AsyncClient() as http:  # a prompt request is served as ever
            assert (await http.get(f"{team.endpoint.base}/board")).status_code == 401


def inotify_watches() -> list[list[int]]:
    """The inode of each watch of each inotify instance this process holds (from /proc/self/fdinfo)."""
    instances = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") != "anon_inode:inotify":
                continue
            info = Path(f"/proc/self/fdinfo/{fd}").read_text()
        except OSError:  # closed meanwhile
            continue
        instances.append(sorted(int(ino, 16) for ino in re.findall(r"^inotify wd:\S+ ino:([0-9a-f]+)", info, re.M)))
    return instances


async def test_the_team_server_watches_each_directory_of_the_tree_once(
    project: Path, state_root: Path, secret_file: Path
) -> None:
    async with serving(project, state_root, secret_file) as team:
        await dispatch(team)
        tree = sorted(path.stat().st_ino for path in [state_root, *state_root.rglob("*")] if path.is_dir())
        # Exactly one instance watches the tree's directories, each once (the writer claims' own
        # instance watches the files their judgements rest on: it never equals the tree).
        with anyio.fail_after(10):  # the new task's directories are watched once the watcher has seen them
            while inotify_watches().count(tree) != 1:
                await anyio.sleep(0.05)

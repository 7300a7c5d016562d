"""The HTTP team server under a real uvicorn on a free loopback port, driven by the SDK's HTTP client."""

from __future__ import annotations

import json
import os
import shutil
import warnings
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import types
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.shared.subscriptions import ResourceUpdated

from bench.loopback import loopback_listener, served
from handoff_core.contract.report import Report, render_report
from handoff_core.errors import ConfigError
from handoff_core.services.capabilities.tokens import lead_token, load_secret
from server.config import Settings, TeamOptions
from server.web.auth import Endpoint
from server.web.team import team_app
from tests.support.calls import FOCUS, call, refused, task_args
from tests.support.changes import CHANGE
from tests.support.content import text_of
from tests.support.exchange import cache_file, inbound, sealed_review
from tests.support.interop import CLIENTS
from tests.support.scope_refusals import REVIEW, all_refused, every_tool_is_refused
from tests.support.team import Team, dispatch, report_args

pytestmark = pytest.mark.anyio


async def test_a_full_round_trip_with_the_leads_subscription_firing(team: Team) -> None:
    created = await dispatch(team)
    uri = f"handoff://{created['ref']}/REPORT.md"
    async with team.lead() as lead, lead.listen(resource_subscriptions=[uri]) as subscription:
        async with team.client("executor", created["report_token"]) as executor:
            task = await call(executor, "read_task", ref=created["ref"])
            assert task["task_sha256"] == created["task_sha256"]
            written = await call(executor, "write_report", **report_args(created))
        with anyio.fail_after(10):
            event = await subscription.__anext__()
        assert event == ResourceUpdated(uri=uri)
        status = await call(lead, "handoff_status")
    assert [t["state"] for t in status["tasks"]] == ["returned:completed"]
    assert Path(written["path"]).read_text().startswith("# 任务回报")


async def test_a_2025_client_subscribed_with_resources_subscribe_is_notified(team: Team) -> None:
    created = await dispatch(team, kind="review", workspace="", writable=[])
    uri = f"handoff://{created['ref']}/REPORT.md"
    arrived = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification) and str(message.params.uri) == uri:
            arrived.set()

    async with team.lead(mode="legacy", message_handler=on_message) as lead:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)  # the 2025 method, on purpose
            await lead.subscribe_resource(uri)
        # Written through the server, by an executor over HTTP (a REPORT written by hand into the tree:
        # test_a_report_written_by_hand_into_the_tree_is_announced_too).
        async with team.client("executor", created["report_token"]) as executor:
            await call(executor, "write_report", **report_args(created))
        with anyio.fail_after(10):
            await arrived.wait()


async def test_a_tasks_token_reaches_that_task_and_nothing_else(team: Team) -> None:
    mine = await dispatch(team, kind="review", workspace="", writable=[], topic="review-a")
    other = await dispatch(team, kind="review", workspace="", writable=[], topic="review-b")
    async with team.client("executor", mine["report_token"]) as executor:
        assert await refused(executor, "read_task", ref=other["ref"]) == "scope_refused"
        assert await refused(executor, "write_report", **{**report_args(other), "token": mine["report_token"]}) in (
            "scope_refused",
        )
        assert await refused(executor, "validate_handoff", ref=other["ref"], stage="dispatch") == "scope_refused"
        status = await call(executor, "handoff_status")
        assert [t["ref"] for t in status["tasks"]] == [mine["ref"]]
        assert await refused(executor, "create_task", **task_args()) == "role_refused"
        assert await refused(executor, "resolve_coordination", work_id="specdev/implement") == "scope_refused"
        with pytest.raises(Exception, match="scope_refused"):
            await executor.read_resource(f"handoff://{other['ref']}/TASK.md")
        own = await executor.read_resource(f"handoff://{mine['ref']}/TASK.md")
        assert own.contents


async def test_a_finished_tasks_token_still_reads_but_cannot_write_again(team: Team) -> None:
    created = await dispatch(team)
    async with team.client("executor", created["report_token"]) as executor:
        await call(executor, "write_report", **report_args(created))
    async with team.client("executor", created["report_token"]) as executor:
        assert (await call(executor, "read_task", ref=created["ref"]))["task_sha256"] == created["task_sha256"]
        other = {**report_args(created), "status": "failed"}
        assert await refused(executor, "write_report", **other) == "write_conflict"


@pytest.mark.parametrize("token", [None, "wrong-token", "lead"])
async def test_a_missing_or_wrong_bearer_is_401_with_www_authenticate(team: Team, token: str | None) -> None:
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    if token == "lead":
        headers["authorization"] = f"Bearer {team.lead_token}"  # the Lead's token is no task's token
    elif token:
        headers["authorization"] = f"Bearer {token}"
    async with httpx2.AsyncClient() as http:
        answer = await http.post(team.endpoint.url("executor"), json={}, headers=headers)
        lead_answer = await http.post(
            team.endpoint.url("lead"), json={}, headers={**headers, "authorization": "Bearer x"}
        )
    assert answer.status_code == 401
    assert answer.headers["www-authenticate"].startswith("Bearer")
    assert lead_answer.status_code == 401
    for text in (answer.text, answer.headers["www-authenticate"]):
        assert team.lead_token not in text


@pytest.mark.parametrize(
    ("header", "value", "status"),
    [("host", "evil.example:80", 421), ("origin", "http://evil.example", 403)],
)
async def test_a_bad_host_or_origin_is_refused_by_the_transport(
    team: Team, header: str, value: str, status: int
) -> None:
    headers = {"authorization": f"Bearer {team.lead_token}", "content-type": "application/json", header: value}
    headers["accept"] = "application/json, text/event-stream"
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    async with httpx2.AsyncClient() as http:
        answer = await http.post(team.endpoint.url("lead"), json=body, headers=headers)
    assert answer.status_code == status


async def test_an_oversized_body_is_refused(team: Team) -> None:
    headers = {"authorization": f"Bearer {team.lead_token}", "content-type": "application/json"}
    async with httpx2.AsyncClient() as http:
        answer = await http.post(team.endpoint.url("lead"), content=b" " * (9 * 1024 * 1024), headers=headers)
    assert answer.status_code == 413


@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.10", "::"])
def test_a_non_loopback_bind_needs_tls_or_an_explicit_proxy(host: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        TeamOptions(host=host)
    assert TeamOptions(host=host, behind_proxy=True).scheme == "http"
    assert TeamOptions(host=host, tls_cert=str(tmp_path / "c"), tls_key=str(tmp_path / "k")).scheme == "https"


async def test_the_http_dispatch_hands_out_http_client_configs(team: Team) -> None:
    created = await dispatch(team)
    config = created["executor_config"]
    assert f'"url": "{team.endpoint.url("executor")}"' in config["claude_code_mcp_json"]
    assert f"Bearer {created['report_token']}" in config["claude_code_mcp_json"]
    assert f'url = "{team.endpoint.url("executor")}"' in config["codex_config_toml"]
    assert 'bearer_token_env_var = "HANDOFF_TOKEN"' in config["codex_config_toml"]


async def test_fifty_executor_sessions_report_at_once_while_the_lead_watches(team: Team) -> None:
    refs: list[dict[str, Any]] = []
    async with team.lead() as lead:
        for index in range(50):
            refs.append(
                await call(
                    lead, "create_task", **task_args(topic=f"review-{index}", kind="review", workspace="", writable=[])
                )
            )
    failures: list[str] = []

    async def one(created: dict[str, Any]) -> None:
        async with team.client("executor", created["report_token"]) as executor:
            result = await executor.call_tool("write_report", report_args(created))
            if result.is_error:
                failures.append(text_of(result))

    async def watch(done: anyio.Event) -> None:
        async with team.lead() as lead:
            while not done.is_set():
                await call(lead, "handoff_status")

    done = anyio.Event()
    with anyio.fail_after(120):
        async with anyio.create_task_group() as group:
            group.start_soon(watch, done)
            async with anyio.create_task_group() as writers:
                for created in refs:
                    writers.start_soon(one, created)
            done.set()
    assert failures == []
    reports = sorted(team.state_root.rglob("REPORT.md"))
    assert len(reports) == 50
    for created in refs:
        text = (
            (team.state_root / "specdev" / "changes")
            .joinpath(*created["ref"].split("/")[:1], "sessions", *created["ref"].split("/")[1:], "REPORT.md")
            .read_text()
        )
        assert f"Task: {created['ref'].split('/')[2]}" in text


@pytest.mark.slow
async def test_the_typescript_sdk_does_the_same_round_trip_over_http(team: Team) -> None:
    node = shutil.which("node")
    if node is None or not (CLIENTS / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
        pytest.fail("node and the TypeScript SDK client are needed: scripts/test installs them")
    args = [team.endpoint.url("lead"), team.lead_token, team.endpoint.url("executor"), CHANGE]
    with anyio.fail_after(60):
        done = await anyio.run_process([node, str(CLIENTS / "http_client.mjs"), *args], check=False)
    assert done.returncode == 0, done.stderr.decode()
    result = json.loads(done.stdout)
    assert result["read"] is True
    assert result["written"] is True
    assert result["notified"] == f"handoff://{result['created']}/REPORT.md"
    assert result["status"] == ["returned:completed"]


def _hand_written_report(session: str, task: str) -> str:
    return render_report(
        Report(
            session=session,
            task=task,
            status="blocked",
            focused=FOCUS,
            artifacts="none",
            verification="not run",
            problems="The suite hangs.",
        )
    )


async def test_a_report_written_by_hand_into_the_tree_is_announced_too(team: Team) -> None:
    created = await dispatch(team, kind="review", workspace="", writable=[])
    uri = f"handoff://{created['ref']}/REPORT.md"
    change, session, task = created["ref"].split("/")
    folder = team.state_root / "specdev" / "changes" / change / "sessions" / session / task
    async with team.lead() as lead, lead.listen(resource_subscriptions=[uri]) as subscription:
        (folder / "REPORT.md").write_text(_hand_written_report(session, task))
        with anyio.fail_after(10):
            event = await subscription.__anext__()
    assert event == ResourceUpdated(uri=uri)


@pytest.mark.parametrize("stray", ["empty", "fifo", "dangling-link", "no-sections"])
async def test_a_stray_entry_named_report_is_not_announced(team: Team, stray: str) -> None:
    first = await dispatch(team, kind="review", workspace="", writable=[], topic="review-a")
    second = await dispatch(team, kind="review", workspace="", writable=[], topic="review-b")
    uris = [f"handoff://{created['ref']}/REPORT.md" for created in (first, second)]
    folders = [Path(created["task_path"]).parent for created in (first, second)]
    async with team.lead() as lead, lead.listen(resource_subscriptions=uris) as subscription:
        target = folders[0] / "REPORT.md"
        if stray == "empty":
            target.write_bytes(b"")
        elif stray == "fifo":
            os.mkfifo(target)
        elif stray == "dangling-link":
            target.symlink_to(folders[0] / "nowhere.md")
        else:
            session, task = first["ref"].split("/")[1:]
            target.write_text(f"# 任务回报\n\nSession: {session}\nTask: {task}\nStatus: blocked\n")
        await anyio.sleep(0)  # the stray is on disk before the real report: were it announced, it came first
        (folders[1] / "REPORT.md").write_text(_hand_written_report(*second["ref"].split("/")[1:]))
        with anyio.fail_after(10):
            event = await subscription.__anext__()
    assert event == ResourceUpdated(uri=uris[1])


async def test_the_board_on_the_team_server_opens_with_the_lead_token_only(team: Team) -> None:
    await dispatch(team)
    board = f"{team.endpoint.base}/board"
    async with httpx2.AsyncClient() as http:
        assert (await http.get(board)).status_code == 401
        assert (await http.get(f"{board}?token=not-the-lead-token")).status_code == 401
        opened = await http.get(f"{board}?token={team.lead_token}")
        assert opened.status_code == 303
        summary = await http.get(f"{board}/api/summary")
    assert summary.status_code == 200
    assert summary.json()["total"] == 1


def _check_line(created: dict[str, Any]) -> str:
    text = Path(created["task_path"]).read_text()
    return next(row for row in text.splitlines() if row.startswith("- Report token check: "))


async def test_a_dispatch_quoting_another_tasks_check_line_is_refused(team: Team) -> None:
    mine = await dispatch(team, kind="review", workspace="", writable=[], topic="review-a")
    async with team.lead() as lead:
        quoting = task_args(
            kind="review", workspace="", writable=[], topic="review-b", goal=f"See:\n{_check_line(mine)}"
        )
        assert await refused(lead, "create_task", **quoting) == "quoted_token_check"


@pytest.mark.parametrize("session", ["20200101T000000Z", "20991231T235959Z"])  # before and after the real one
async def test_a_planted_task_quoting_a_check_line_in_its_goal_is_not_opened_by_that_token(
    team: Team, session: str
) -> None:
    mine = await dispatch(team, kind="review", workspace="", writable=[], topic="review-a")
    line, text = _check_line(mine), Path(mine["task_path"]).read_text()
    planted = team.state_root / "specdev" / "changes" / CHANGE / "sessions" / session / "001-planted"
    planted.mkdir(parents=True)
    real_session, real_task = mine["ref"].split("/")[1:]
    forged = text.replace(real_session, session).replace(real_task, "001-planted").replace(line + "\n", "")
    (planted / "TASK.md").write_text(forged.replace("## Goal\n", f"## Goal\n{line}\n", 1))
    async with team.client("executor", mine["report_token"]) as executor:
        status = await call(executor, "handoff_status")
        assert [t["ref"] for t in status["tasks"]] == [mine["ref"]]
        assert (await call(executor, "read_task", ref=mine["ref"]))["task_sha256"] == mine["task_sha256"]
        assert await refused(executor, "read_task", ref=f"{CHANGE}/{session}/001-planted") == "scope_refused"


async def test_every_executor_tool_refuses_another_tasks_ref_over_http(team: Team) -> None:
    mine = await dispatch(team, topic="review-a", **REVIEW)
    other = await dispatch(team, topic="review-b", new_round=True, **REVIEW)  # another round, not this one's
    async with team.client("executor", mine["report_token"]) as executor:
        outcomes = await every_tool_is_refused(executor, other, mine)
    assert all_refused(outcomes), outcomes


async def test_the_team_servers_lead_refuses_a_return_from_the_users_cache_directory(
    project: Path, state_root: Path, secret_file: Path, tmp_path: Path
) -> None:
    settings = Settings(
        role="lead", project_root=project, state_root=state_root, secret_file=secret_file, cache_dir=tmp_path / "cache"
    )
    listener = loopback_listener()
    endpoint = Endpoint("127.0.0.1", listener.getsockname()[1])
    async with served(team_app(settings, endpoint), listener):
        team = Team(endpoint, lead_token(load_secret(secret_file), state_root), state_root)
        async with team.lead() as lead:
            ids = await sealed_review(lead, project)
            assert await refused(lead, "receive_return", **ids, raw_file=cache_file(tmp_path)) == "unsafe_path"
    assert inbound(project, ids) == []

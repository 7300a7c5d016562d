"""Executors through the HTTP team server, in a linked worktree: the Lead dispatches over HTTP,
the executor starts with exactly the line the dispatch answer printed (its server is the team
server's executor endpoint, its bearer the task's report token), commits in its worktree, and the
Lead audits the change."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from bench.loopback import loopback_listener, served
from handoff_core.services.capabilities.tokens import lead_token, load_secret
from server.config import Settings
from server.web.auth import Endpoint
from server.web.team import team_app
from tests.support.agents import agent_env, claude_exec, codex_exec, codex_line, codex_provider
from tests.support.calls import call, task_args
from tests.support.executor_runs import once_connected, patch, report_call
from tests.support.gitrepo import add_worktree, git
from tests.support.model_anthropic import AnthropicModel
from tests.support.model_openai import OpenAIModel
from tests.support.model_server import Block, Text, ToolCall, Turn
from tests.support.team import Team

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # the real agent CLIs against a served team server


@pytest.fixture
async def team(repo: Path, state_root: Path, secret_file: Path) -> AsyncIterator[Team]:
    listener = loopback_listener()
    endpoint = Endpoint("127.0.0.1", listener.getsockname()[1])
    settings = Settings(role="lead", project_root=repo, state_root=state_root, secret_file=secret_file)
    async with served(team_app(settings, endpoint), listener):
        yield Team(endpoint, lead_token(load_secret(secret_file), state_root), state_root)


async def dispatch_in_worktree(team: Team, worktree: Path) -> dict[str, Any]:
    args = task_args(workspace="required", worktree=str(worktree), branch="task-a", authorised_actions=["commit"])
    async with team.lead() as lead:
        return await call(lead, "create_task", **args)


def with_checkpoint(report: ToolCall, tree: Path) -> Callable[[dict[str, Any]], list[Block]]:
    """``write_report`` with the worktree's HEAD as its checkpoint, read when the model would."""

    def turn(_: dict[str, Any]) -> list[Block]:
        head = git(tree, "rev-parse", "HEAD").stdout.strip()
        arguments = report.arguments | {"source_checkpoint": head}
        return [ToolCall(report.name, arguments, call_id=report.call_id, namespace=report.namespace)]

    return turn


async def audited(team: Team, ref: str) -> dict[str, Any]:
    async with team.lead() as lead:
        return await call(lead, "audit_task", ref=ref)


async def test_claude_code_through_the_team_server_works_in_its_worktree_and_is_audited_as_passed(
    team: Team, repo: Path, home: Path
) -> None:
    tree = add_worktree(repo, "task-a")
    created = await dispatch_in_worktree(team, tree)
    line = created["executor_config"]["claude_code_cli"]
    assert team.endpoint.url("executor") in line
    inside = ToolCall("Write", {"file_path": str(tree / "src/a1/new.py"), "content": "VALUE = 1\n"})
    outside = ToolCall("Write", {"file_path": str(tree / "src/b/stolen.py"), "content": "stolen\n"})
    commit = ToolCall("Bash", {"command": "git add -A && git commit -q -m work"})
    report = report_call(created)
    script: list[Turn] = [[inside], [outside], [commit], once_connected(report, with_checkpoint(report, tree))]
    with AnthropicModel(script) as model:
        env = agent_env(home, model.url)
        prompt = created["dispatch_message"]
        run = await anyio.to_thread.run_sync(lambda: claude_exec(line, prompt, tree, env))
    assert run.returncode == 0, run
    results = AnthropicModel.tool_results(model.main_requests[-1])
    assert "created successfully" in results[inside.call_id]
    assert f"may not write {tree / 'src/b/stolen.py'}" in results[outside.call_id]
    assert not (tree / "src/b/stolen.py").exists()
    assert '"created":true' in results[report.call_id].replace(" ", "")
    verdict = await audited(team, created["ref"])
    assert verdict["verdict"] == "passed", verdict
    assert verdict["changed"] == ["A src/a1/new.py"]


async def test_codex_through_the_team_server_patches_its_worktree_and_is_audited_as_passed(
    team: Team, repo: Path, home: Path, tmp_path: Path
) -> None:
    tree = add_worktree(repo, "task-a")
    created = await dispatch_in_worktree(team, tree)
    assert team.endpoint.url("executor") in " ".join(created["executor_config"]["codex_args"])
    inside, outside = patch("src/a1/new.py"), patch("src/b/stolen.py")
    commit = ToolCall("exec_command", {"cmd": "git add -A && git commit -q -m work"})
    report = ToolCall("write_report", report_call(created).arguments, namespace="mcp__handoff")
    script: list[Turn] = [[inside], [outside], [commit], with_checkpoint(report, tree), [Text("Done.")]]
    with OpenAIModel(script) as model:
        env = agent_env(home, model.url) | {"HANDOFF_TOKEN": created["report_token"]}
        codex_provider(model.url, tmp_path, home)
        line, prompt = codex_line(created["executor_config"]), created["dispatch_message"]
        run = await anyio.to_thread.run_sync(lambda: codex_exec(line, prompt, tree, env))
    assert run.returncode == 0, run
    outputs = OpenAIModel.outputs(model.main_requests[-1])
    assert "Success" in outputs[inside.call_id]
    assert f"may not write {tree / 'src/b/stolen.py'}" in outputs[outside.call_id]
    assert not (tree / "src/b/stolen.py").exists()
    assert '"created":true' in outputs[report.call_id].replace(" ", "")
    verdict = await audited(team, created["ref"])
    assert verdict["verdict"] == "passed", verdict
    assert verdict["changed"] == ["A src/a1/new.py"]

"""Claude Code as the executor on a second machine: its own HOME and clone (no handoff tree), a bare
repository as the shared remote, the team server on 127.0.0.1. It starts with exactly the HTTP launch
text the dispatch printed, its model scripted: the guard asks the team server, the work is committed
and pushed, the report names the pushed commit, and the Lead audits through the remote."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.support.agents import AgentRun, agent_env, claude_exec
from tests.support.calls import call, task_args
from tests.support.executor_runs import once_connected, report_call
from tests.support.gitrepo import git
from tests.support.model_anthropic import AnthropicModel
from tests.support.model_server import Block, ToolCall, Turn
from tests.support.remote import Elsewhere
from tests.support.team import Team

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # the real Claude Code CLI against a served team server


async def dispatch_branch(team: Team, topic: str, branch: str, **more: Any) -> dict[str, Any]:
    """A task on ``branch`` of the shared remote, whose executor may commit and push."""
    args = task_args(topic=topic, workspace="required", branch=branch, shared=[], authorised_actions=["commit", "push"])
    args |= more
    async with team.lead() as lead:
        return await call(lead, "create_task", **args)


def pushed_report(report: ToolCall, clone: Path, branch: str) -> Callable[[dict[str, Any]], list[Block]]:
    """``report`` whose checkpoint is the commit the remote's ``branch`` holds, read when the model would
    (after its push)."""

    def turn(_: dict[str, Any]) -> list[Block]:
        pushed = git(clone, "rev-parse", f"origin/{branch}", check=False).stdout.strip()
        return [ToolCall(report.name, report.arguments | {"source_checkpoint": pushed}, call_id=report.call_id)]

    return turn


async def run_elsewhere(
    created: dict[str, Any], place: Elsewhere, script: list[Turn]
) -> tuple[AgentRun, AnthropicModel]:
    """Claude Code in the clone, started with the printed launch text (set-up lines, then claude)."""
    line = created["executor_config"]["claude_code_cli"]
    model = AnthropicModel(script)
    with model:
        env = agent_env(place.home, model.url) | {"XDG_CACHE_HOME": str(place.home / ".cache")}
        prompt = created["dispatch_message"]
        run = await anyio.to_thread.run_sync(lambda: claude_exec(line, prompt, place.clone, env))
    return run, model


def sent_checkpoint(model: AnthropicModel, call_id: str) -> str:
    """The ``source_checkpoint`` of the ``write_report`` call ``call_id``, as Claude Code replayed it."""
    for message in model.main_requests[-1].get("messages", []):
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_use" and block.get("id") == call_id:
                return str(block["input"]["source_checkpoint"])
    raise AssertionError(f"no tool call {call_id} in the last request")


async def audited(team: Team, ref: str) -> dict[str, Any]:
    async with team.lead() as lead:
        return await call(lead, "audit_task", ref=ref)


async def test_claude_code_elsewhere_is_guarded_by_the_team_server_pushes_reports_and_passes_the_audit(
    team: Team, elsewhere: Elsewhere
) -> None:
    created = await dispatch_branch(team, "remote-claude", "task-c1")
    assert team.endpoint.url("executor") in created["executor_config"]["claude_code_cli"]
    git(elsewhere.clone, "checkout", "-q", "-b", "task-c1")
    inside = ToolCall("Write", {"file_path": str(elsewhere.clone / "src/a1/new.py"), "content": "VALUE = 1\n"})
    outside = ToolCall("Write", {"file_path": str(elsewhere.clone / "src/b/stolen.py"), "content": "stolen\n"})
    commit = ToolCall("Bash", {"command": "git add -A && git commit -q -m work && git push -q origin task-c1"})
    report = report_call(created)
    report_pushed = pushed_report(report, elsewhere.clone, "task-c1")
    script: list[Turn] = [[inside], [outside], [commit], once_connected(report, report_pushed)]
    run, model = await run_elsewhere(created, elsewhere, script)
    assert run.returncode == 0, run
    results = AnthropicModel.tool_results(model.main_requests[-1])
    assert "created successfully" in results[inside.call_id]
    # The guard's denial, as Claude Code sent it back to the model: it asked the team server for the TASK.
    denied = results[outside.call_id]
    assert f"handoff task {created['ref']} may not write {elsewhere.clone / 'src/b/stolen.py'}" in denied
    assert not (elsewhere.clone / "src/b/stolen.py").exists()
    assert len(list((elsewhere.home / ".cache/handoff-mcp/tasks").glob("*.md"))) == 1  # read from the server
    assert '"created":true' in results[report.call_id].replace(" ", "")
    pushed = git(elsewhere.bare, "rev-parse", "task-c1").stdout.strip()
    assert git(elsewhere.clone, "rev-parse", "HEAD").stdout.strip() == pushed
    assert sent_checkpoint(model, report.call_id) == pushed
    verdict = await audited(team, created["ref"])
    assert (verdict["verdict"], verdict["changed"]) == ("passed", ["A src/a1/new.py"]), verdict


async def test_claude_code_elsewhere_that_commits_a_stray_path_past_the_hook_fails_the_audit(
    team: Team, elsewhere: Elsewhere
) -> None:
    created = await dispatch_branch(team, "remote-stray", "task-c2", sandbox="off")  # nothing stops the write
    git(elsewhere.clone, "checkout", "-q", "-b", "task-c2")
    inside = ToolCall("Write", {"file_path": str(elsewhere.clone / "src/a1/new.py"), "content": "VALUE = 1\n"})
    hooked = ToolCall("Bash", {"command": "echo stray > src/b/other.py && git add -A && git commit -q -m work"})
    skipped = ToolCall("Bash", {"command": "git commit -q --no-verify -m work && git push -q origin task-c2"})
    report = report_call(created)
    report_pushed = pushed_report(report, elsewhere.clone, "task-c2")
    script: list[Turn] = [[inside], [hooked], [skipped], once_connected(report, report_pushed)]
    run, model = await run_elsewhere(created, elsewhere, script)
    assert run.returncode == 0, run
    results = AnthropicModel.tool_results(model.main_requests[-1])
    # The clone's pre-commit hook (installed by the launch) refused the commit and named the path.
    refused = results[hooked.call_id]
    assert f"outside task {created['ref']}'s scope:\n  src/b/other.py" in refused, refused
    assert '"created":true' in results[report.call_id].replace(" ", "")
    assert git(elsewhere.bare, "show", "task-c2:src/b/other.py").stdout == "stray\n"
    assert sent_checkpoint(model, report.call_id) == git(elsewhere.bare, "rev-parse", "task-c2").stdout.strip()
    verdict = await audited(team, created["ref"])
    assert verdict["verdict"] == "failed", verdict
    assert [v["path"] for v in verdict["violations"]] == ["src/b/other.py"]

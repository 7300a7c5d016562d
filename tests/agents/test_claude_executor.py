"""Claude Code as the executor, launched with exactly the line ``create_task`` printed, its model
scripted: what lands, what the guard denies, and what the CLI told the model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.agents.agents import agent_env, claude_exec, write_report_arguments
from tests.agents.model_anthropic import AnthropicModel
from tests.agents.model_server import Text, ToolCall, Turn
from tests.server.test_tools import FOCUS, call, task_args
from tests.server.wire import serve_command

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # the real Claude Code CLI and server processes


async def dispatch(project: Path, secret_file: Path, **overrides: Any) -> dict[str, Any]:
    """``create_task`` through the Lead's stdio server, as the Lead's client calls it."""
    command = serve_command("lead", project, secret_file)
    async with Client(StdioServerParameters(command=command[0], args=command[1:])) as lead:
        return await call(lead, "create_task", **task_args(**overrides))


def report_call(created: dict[str, Any]) -> ToolCall:
    arguments = write_report_arguments(created["dispatch_message"])
    arguments |= {"status": "completed", "focused": FOCUS, "artifacts": "src/a1/new.py"}
    return ToolCall("mcp__handoff__write_report", arguments | {"verification": "pytest: exit 0"})


async def test_claude_code_lands_an_edit_in_scope_is_denied_one_outside_and_reports(
    repo: Path, secret_file: Path, home: Path
) -> None:
    created = await dispatch(repo, secret_file)
    inside = ToolCall("Write", {"file_path": str(repo / "src/a1/new.py"), "content": "VALUE = 1\n"})
    outside = ToolCall("Write", {"file_path": str(repo / "src/b/stolen.py"), "content": "stolen\n"})
    report = report_call(created)
    script: list[Turn] = [[inside], [outside], [report], [Text("Done.")]]
    with AnthropicModel(script) as model:
        line = created["executor_config"]["claude_code_cli"]
        run = claude_exec(line, created["dispatch_message"], repo, agent_env(home, model.url))
    assert run.returncode == 0, run
    results = AnthropicModel.tool_results(model.main_requests[-1])
    assert "created successfully" in results[inside.call_id]
    denied = results[outside.call_id]
    assert f"handoff task {created['ref']} may not write {repo / 'src/b/stolen.py'}" in denied
    assert '"created":true' in results[report.call_id].replace(" ", "")
    assert (repo / "src/a1/new.py").read_text() == "VALUE = 1\n"
    assert not (repo / "src/b/stolen.py").exists()
    assert Path(created["report_path_in_project"]).name == "REPORT.md"
    assert (repo / created["report_path_in_project"]).is_file()
    # The launch line pinned the session: the CLI ran under the id the dispatch answer names.
    session_id = created["executor_config"]["session_id"]
    assert f'"session_id":"{session_id}"' in run.stdout.replace(" ", "")

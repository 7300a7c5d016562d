"""Claude Code as the executor, launched with exactly the line ``create_task`` printed, its model
scripted: what lands, what the guard denies, and what the CLI told the model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from handoff_core.files.executor_home import executor_home
from handoff_core.services.capabilities.tokens import executor_session_id
from tests.support.agents import agent_env, claude_exec
from tests.support.executor_runs import dispatch, lead_call, once_connected, report_call
from tests.support.model_anthropic import AnthropicModel
from tests.support.model_server import Text, ToolCall, Turn

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # the real Claude Code CLI and server processes


async def test_claude_code_lands_an_edit_in_scope_is_denied_one_outside_and_reports(
    repo: Path, secret_file: Path, home: Path
) -> None:
    created = await dispatch(repo, secret_file)
    inside = ToolCall("Write", {"file_path": str(repo / "src/a1/new.py"), "content": "VALUE = 1\n"})
    outside = ToolCall("Write", {"file_path": str(repo / "src/b/stolen.py"), "content": "stolen\n"})
    report = report_call(created)
    script: list[Turn] = [[inside], [outside], once_connected(report), [Text("Done.")]]
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
    # The launch line pinned the session (the id derives from the report token); the Lead's server finds
    # that session's log with no path given, confirms it as this task's, and records it.
    session_id = executor_session_id(created["report_token"])
    assert f"--session-id {session_id}" in line
    assert f'"session_id":"{session_id}"' in run.stdout.replace(" ", "")
    recorded = await lead_call(repo, secret_file, "record_session_locator", home, ref=created["ref"])
    log = json.loads(Path(recorded["path"]).read_text())["path"]
    # The executor ran in its sandbox's home: its log is there, not in the user's home.
    executor = executor_home(str(repo / "speculo" / ".speculo"), created["ref"])
    assert Path(log).parent.parent == Path(executor.home) / ".claude" / "projects"
    assert Path(log).name == f"{session_id}.jsonl"


async def test_the_printed_line_runs_again_and_continues_its_session(repo: Path, secret_file: Path, home: Path) -> None:
    created = await dispatch(repo, secret_file)
    line = created["executor_config"]["claude_code_cli"]
    first = ToolCall("Write", {"file_path": str(repo / "src/a1/new.py"), "content": "VALUE = 1\n"})
    with AnthropicModel([[first]]) as model:  # then it ends without a REPORT, as a crashed run would
        run = claude_exec(line, created["dispatch_message"], repo, agent_env(home, model.url))
    assert run.returncode == 0, run
    report = report_call(created)
    with AnthropicModel([once_connected(report), [Text("Done.")]]) as model:
        again = claude_exec(line, "Carry on and report.", repo, agent_env(home, model.url))
        resumed = model.main_requests[0]
    assert again.returncode == 0, again
    # The same line, run again, continued the session it pinned: the model saw the first run's work.
    assert first.call_id in json.dumps(resumed["messages"])
    assert '"created":true' in AnthropicModel.tool_results(model.main_requests[-1])[report.call_id].replace(" ", "")
    session_id = executor_session_id(created["report_token"])
    recorded = await lead_call(repo, secret_file, "record_session_locator", home, ref=created["ref"])
    assert Path(json.loads(Path(recorded["path"]).read_text())["path"]).name == f"{session_id}.jsonl"

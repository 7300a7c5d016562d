"""Codex as the executor, started with exactly the ``-c`` arguments ``create_task`` printed, its model
scripted over the Responses API: ``apply_patch`` judged by the guard, and what Codex told the model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from handoff_core.files.executor_home import executor_home
from tests.support.agents import agent_env, codex_exec, codex_line, codex_provider
from tests.support.executor_runs import dispatch, lead_call, patch, report_call
from tests.support.model_openai import OpenAIModel
from tests.support.model_server import Text, ToolCall, Turn

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # the real Codex CLI and server processes


def codex_report(created: dict[str, Any]) -> ToolCall:
    call = report_call(created)
    return ToolCall("write_report", call.arguments, namespace="mcp__handoff")


async def test_codex_applies_a_patch_in_scope_is_denied_one_outside_and_reports(
    repo: Path, secret_file: Path, home: Path, tmp_path: Path
) -> None:
    created = await dispatch(repo, secret_file)
    inside, outside, report = patch("src/a1/new.py"), patch("src/b/stolen.py"), codex_report(created)
    script: list[Turn] = [[inside], [outside], [report], [Text("Done.")]]
    with OpenAIModel(script) as model:
        env = agent_env(home, model.url)
        codex_provider(model.url, tmp_path, home)
        run = codex_exec(codex_line(created["executor_config"]), created["dispatch_message"], repo, env)
    assert run.returncode == 0, run
    first = model.main_requests[0]
    assert "apply_patch" in OpenAIModel.tool_names(first), OpenAIModel.tool_names(first)
    outputs = OpenAIModel.outputs(model.main_requests[-1])
    assert (repo / "src/a1/new.py").read_text() == "VALUE = 1\n"
    assert not (repo / "src/b/stolen.py").exists()
    assert f"handoff task {created['ref']} may not write {repo / 'src/b/stolen.py'}" in outputs[outside.call_id]
    assert '"created":true' in outputs[report.call_id].replace(" ", "")
    # Codex's session id cannot be pinned at launch: the Lead gives the thread id `exec --json` printed,
    # and its server finds that rollout, confirms it as this task's and records it.
    (thread,) = [e["thread_id"] for e in run.json_lines() if e.get("type") == "thread.started"]
    recorded = await lead_call(repo, secret_file, "record_session_locator", home, ref=created["ref"], session_id=thread)
    log = Path(json.loads(Path(recorded["path"]).read_text())["path"])
    assert log.is_relative_to(Path(executor_home(str(repo / "speculo" / ".speculo"), created["ref"]).home))
    assert log.name.startswith("rollout-")
    assert log.name.endswith(f"-{thread}.jsonl")

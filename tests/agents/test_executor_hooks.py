"""The executor's post-tool and Stop hooks with the real CLIs over stdio, their models scripted: a
shell command that writes outside the scope is named to the model at once with how to put it back
(a launch the Lead ran without the sandbox, where nothing else stops the write), and an end without
a REPORT is blocked with what to do, a bounded number of times, then recorded by the broker outside
the sandbox. Asserted from what each CLI sent its model, and from the files."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from handoff_core.services.capabilities.tokens import executor_session_id
from handoff_core.services.evidence.endings import MAX_STOP_BLOCKS, ended_without_report
from tests.support.agents import agent_env, claude_exec, codex_exec, codex_line, codex_provider
from tests.support.calls import call
from tests.support.executor_runs import dispatch
from tests.support.model_anthropic import AnthropicModel
from tests.support.model_openai import OpenAIModel
from tests.support.model_server import ToolCall, Turn
from tests.support.wire import serve_command

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # the real agent CLIs and server processes

STRAY_REASON = "the last command changed paths outside the task's scope (writable: src/a1/**)"
PUT_BACK = "src/b/stray.py: rm -- src/b/stray.py"
STOP_REASON = "has no REPORT yet. Before you end, publish your REPORT once with the handoff MCP tool write_report"


def told(body: dict[str, Any]) -> str:
    """What a Messages request's last message told the model (tool results, hook reminders, feedback)."""
    return json.dumps(body["messages"][-1]["content"])


async def lead_status(project: Path, secret_file: Path) -> dict[str, Any]:
    """``handoff_status`` of the Lead's stdio server, as this user runs it: with the cache directory the
    executor's hooks wrote to (the SDK passes a server only a few variables unless told)."""
    command = serve_command("lead", project, secret_file)
    env = {"XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"]}
    async with Client(StdioServerParameters(command=command[0], args=command[1:], env=env)) as lead:
        return await call(lead, "handoff_status", view="all")


async def assert_ended_unreported(repo: Path, secret_file: Path, state_root: Path, ref: str, session: str) -> None:
    """The Stop hook recorded ``session`` as ended without ``ref``'s REPORT, and the Lead's status says so."""
    ending = ended_without_report(str(state_root), ref)
    assert ending is not None
    assert ending.session_id == session
    status = await lead_status(repo, secret_file)
    (task,) = status["tasks"]
    assert task["state"] == "dispatched"
    assert task["attention"].startswith(f"ended without a report (session {session})"), task
    assert task["attention"] in task["problems"]


async def test_claude_code_is_told_of_a_stray_shell_write_and_kept_from_ending_without_its_report(
    repo: Path, secret_file: Path, home: Path, state_root: Path
) -> None:
    created = await dispatch(repo, secret_file, sandbox="off")
    stray = ToolCall("Bash", {"command": "echo x > src/b/stray.py"})
    put_back = ToolCall("Bash", {"command": "rm -- src/b/stray.py"})
    script: list[Turn] = [[stray], [put_back]]  # then it says it is done, with no REPORT
    with AnthropicModel(script) as model:
        line = created["executor_config"]["claude_code_cli"]
        run = claude_exec(line, created["dispatch_message"], repo, agent_env(home, model.url))
    assert run.returncode == 0, run
    initial, after_stray, after_put_back, *after_stops = model.main_requests
    # The post-tool hook's block reason reached the model with the very next request: the path, and
    # the command that puts it back. The model ran it; the tree is clean and nothing more is said.
    assert f"{STRAY_REASON} in {repo}" in told(after_stray)
    assert PUT_BACK in told(after_stray)
    assert STRAY_REASON not in told(after_put_back)
    assert not (repo / "src/b/stray.py").exists()
    # Each end without a REPORT is blocked with the Stop hook's reason naming write_report, a bounded
    # number of times; then the session ends and is recorded as ended without its REPORT.
    assert len(after_stops) == MAX_STOP_BLOCKS
    assert all(f"Stop hook feedback:\\nhandoff guard for {created['ref']}" in told(b) for b in after_stops)
    assert all(STOP_REASON in told(b) for b in after_stops)
    assert STOP_REASON not in told(initial) + told(after_stray) + told(after_put_back)
    session = executor_session_id(created["report_token"])  # the session the printed line pinned
    await assert_ended_unreported(repo, secret_file, state_root, created["ref"], session)


def hook_prompts(body: dict[str, Any]) -> list[str]:
    """The texts Codex's hooks gave the model as user messages (``<hook_prompt …>``) in a request."""
    found = []
    for item in body.get("input", []):
        if isinstance(item, dict) and item.get("type") == "message" and item.get("role") == "user":
            texts = [str(part.get("text", "")) for part in item.get("content", []) if isinstance(part, dict)]
            found += [text for text in texts if text.startswith("<hook_prompt")]
    return found


async def test_codex_is_told_of_a_stray_shell_write_and_kept_from_ending_without_its_report(
    repo: Path, secret_file: Path, home: Path, state_root: Path, tmp_path: Path
) -> None:
    created = await dispatch(repo, secret_file, sandbox="off")
    stray = ToolCall("exec_command", {"cmd": "echo x > src/b/stray.py"})
    put_back = ToolCall("exec_command", {"cmd": "rm -- src/b/stray.py"})
    script: list[Turn] = [[stray], [put_back]]
    with OpenAIModel(script) as model:
        env = agent_env(home, model.url)
        codex_provider(model.url, tmp_path, home)
        run = codex_exec(codex_line(created["executor_config"]), created["dispatch_message"], repo, env)
    assert run.returncode == 0, run
    _, after_stray, after_put_back, *after_stops = model.main_requests
    # Codex gives the model the post-tool hook's block reason in place of the command's output.
    told = OpenAIModel.outputs(after_stray)[stray.call_id]
    assert f"{STRAY_REASON} in {repo}" in told
    assert PUT_BACK in told
    assert STRAY_REASON not in OpenAIModel.outputs(after_put_back)[put_back.call_id]
    assert not (repo / "src/b/stray.py").exists()
    assert len(after_stops) == MAX_STOP_BLOCKS
    prompts = hook_prompts(after_stops[-1])
    assert len(prompts) == MAX_STOP_BLOCKS
    assert all(f"handoff guard for {created['ref']}: the task {STOP_REASON}" in p for p in prompts)
    assert hook_prompts(after_put_back) == []
    (thread,) = [e["thread_id"] for e in run.json_lines() if e.get("type") == "thread.started"]
    await assert_ended_unreported(repo, secret_file, state_root, created["ref"], thread)

"""The Lead's side of the loop in the real CLIs: a Lead (Claude Code, and Codex) configured with what
``handoff-mcp config --role lead`` prints dispatches with ``create_task``; the executor is started
with the line the answer printed (the test plays the person who starts the worker); the Lead then
calls ``wait_for_reports``, ``read_handoff`` and ``audit_task``. Each step is asserted from what the
Lead's CLI sent its model back."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.agents import agent_env, claude_exec, codex_lead, codex_provider
from tests.support.calls import FOCUS, task_args
from tests.support.executor_runs import once_connected, report_call
from tests.support.gitrepo import git
from tests.support.lead_runs import lead_config
from tests.support.model_anthropic import AnthropicModel
from tests.support.model_openai import OpenAIModel
from tests.support.model_server import Block, Text, ToolCall, Turn, Until
from tests.support.wire import SCRIPT

pytestmark = pytest.mark.slow  # the real agent CLIs, the Lead's and the executor's servers as processes

Call = Callable[[str, dict[str, Any]], ToolCall]  # a handoff tool call as the Lead's CLI names it
Outputs = Callable[[dict[str, Any]], dict[str, str]]  # the tool results a request carries, by call id


def run_executor(repo: Path, home: Path, created: dict[str, Any]) -> None:
    """The worker, started with the printed Claude Code line, against its own scripted model."""
    head = git(repo, "rev-parse", "HEAD").stdout.strip()
    write = ToolCall("Write", {"file_path": str(repo / "src/a1/new.py"), "content": "VALUE = 1\n"})
    base = report_call(created)
    report = ToolCall(base.name, base.arguments | {"source_checkpoint": head})
    script: list[Turn] = [[write], once_connected(report), [Text("Done.")]]
    with AnthropicModel(script) as model:
        line = created["executor_config"]["claude_code_cli"]
        run = claude_exec(line, created["dispatch_message"], repo, agent_env(home / "executor", model.url))
    assert run.returncode == 0, run


class LeadScript:
    """create_task; then, the worker having run, wait_for_reports, read_handoff and audit_task."""

    def __init__(self, repo: Path, home: Path, call: Call, outputs: Outputs) -> None:
        self.repo, self.home, self.call, self.outputs = repo, home, call, outputs
        self.create = call("create_task", task_args())
        self.created: dict[str, Any] = {}
        self.steps: dict[str, ToolCall] = {}

    def turns(self) -> list[Turn]:
        return [[self.create], self._dispatched, self._next("read_handoff"), self._next("audit_task"), [Text("Done.")]]

    def _dispatched(self, body: dict[str, Any]) -> list[Block]:
        text = self.outputs(body)[self.create.call_id]
        self.created = json.loads(text[text.index("{") : text.rindex("}") + 1])
        run_executor(self.repo, self.home, self.created)
        return [self._step("wait_for_reports", {"refs": [self.created["ref"]], "timeout_s": 10})]

    def _next(self, tool: str) -> Callable[[dict[str, Any]], list[Block]]:
        return lambda _: [self._step(tool, {"ref": self.created["ref"]})]

    def _step(self, tool: str, arguments: dict[str, Any]) -> ToolCall:
        self.steps[tool] = self.call(tool, arguments)
        return self.steps[tool]

    def results(self, last: dict[str, Any]) -> dict[str, str]:
        """Each step's result, as the Lead's CLI sent it back to the model."""
        outputs = self.outputs(last)
        return {tool: outputs[step.call_id] for tool, step in self.steps.items()}


def assert_the_loop_closed(script: LeadScript, results: dict[str, str], dirty_then: list[str]) -> None:
    """The loop closed, and the audit judged the task's uncommitted path in its scope: a current task is
    judged on what changed since dispatch; the paths dirty then (the Lead's own configuration in the
    project) it names as not judged, and cannot pass while they lie outside the scope."""
    ref = script.created["ref"]
    assert f"{ref} REPORT.md" in results["wait_for_reports"]
    assert FOCUS in results["read_handoff"]
    audit = json.loads(results["audit_task"][results["audit_task"].index("{") : results["audit_task"].rindex("}") + 1])
    assert (audit["verdict"], audit["dirty"]) == ("unknown" if dirty_then else "passed", ["? src/a1/new.py"])
    assert [line.split(": dirty at dispatch")[0] for line in audit["not_judged"]] == dirty_then
    assert (script.repo / "src/a1/new.py").read_text() == "VALUE = 1\n"


def test_a_claude_code_lead_dispatches_waits_reads_and_audits(repo: Path, secret_file: Path, home: Path) -> None:
    (repo / ".mcp.json").write_text(lead_config(repo, secret_file, "claude-code"))
    (repo / ".claude").mkdir()  # the project approval the printed note names
    (repo / ".claude" / "settings.local.json").write_text(json.dumps({"enabledMcpjsonServers": ["handoff"]}))
    script = LeadScript(
        repo, home, lambda tool, args: ToolCall(f"mcp__handoff__{tool}", args), AnthropicModel.tool_results
    )
    turns = script.turns()
    turns[0] = once_connected(script.create)
    with AnthropicModel(turns) as model:
        run = claude_exec(
            "claude",
            "Dispatch A1 and follow it up.",
            repo,
            agent_env(home, model.url),
            "--allowedTools",
            "mcp__handoff",
        )
    assert run.returncode == 0, run
    assert_the_loop_closed(
        script, script.results(model.main_requests[-1]), [".claude/settings.local.json", ".mcp.json"]
    )


def test_a_codex_lead_dispatches_waits_reads_and_audits(
    repo: Path, secret_file: Path, home: Path, tmp_path: Path
) -> None:
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "config.toml").write_text(lead_config(repo, secret_file, "codex"))
    script = LeadScript(
        repo, home, lambda tool, args: ToolCall(tool, args, namespace="mcp__handoff"), OpenAIModel.outputs
    )
    turns = script.turns()
    # Codex adds a server's tools once it has started; meanwhile the model does something harmless.
    ready = lambda body: any(t.get("name") == "mcp__handoff" for t in body.get("tools", []))  # noqa: E731
    turns[0] = Until(ready, [script.create], [ToolCall("exec_command", {"cmd": "true"})])
    with OpenAIModel(turns) as model:
        codex_provider(model.url, tmp_path, home)
        run = codex_lead("Dispatch A1 and follow it up.", repo, agent_env(home, model.url))
    assert run.returncode == 0, run
    assert_the_loop_closed(script, script.results(model.main_requests[-1]), [])  # its configuration is in home


# Claude Code's headless run waits this long for a still-connecting MCP server before its first turn;
# a server listed with alwaysLoad it waits for up to its connect timeout (MCP_CONNECT_TIMEOUT_MS, 5 s).
HEADLESS_WAIT_S = 2.0
SLOW_START_S = HEADLESS_WAIT_S + 0.5  # past the headless wait, well inside the connect timeout


def test_a_claude_code_lead_whose_server_starts_slowly_has_the_handoff_tools_on_its_first_turn(
    repo: Path, secret_file: Path, home: Path, tmp_path: Path
) -> None:
    """A loaded machine, where the Lead's server takes longer to start than Claude Code's headless run
    waits by default: with the printed configuration the first request still offers create_task."""
    slow = tmp_path / "slow-handoff-mcp"  # the installed command, started as late as on a loaded machine
    slow.write_text(f'#!/bin/sh\nsleep {SLOW_START_S}\nexec {SCRIPT} "$@"\n')
    slow.chmod(0o755)
    (repo / ".mcp.json").write_text(lead_config(repo, secret_file, "claude-code", "--command", str(slow)))
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.local.json").write_text(json.dumps({"enabledMcpjsonServers": ["handoff"]}))
    with AnthropicModel([[Text("Done.")]]) as model:
        run = claude_exec("claude", "Dispatch A1.", repo, agent_env(home, model.url), "--allowedTools", "mcp__handoff")
    assert run.returncode == 0, run
    first = [tool.get("name") for tool in model.main_requests[0].get("tools", [])]
    assert "mcp__handoff__create_task" in first, first

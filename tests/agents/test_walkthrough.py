"""The README's first dispatch, verbatim, with the real CLIs: its shell blocks run as printed, the
Lead (Claude Code or Codex, its model scripted) calls the tools with the README's JSON, and the
executor is started by pasting the command ``create_task`` printed (Claude Code or Codex, its model
scripted to do the README's work and report with the README's arguments). Every pairing, twice in a
row in one project. The timings of each walk are printed (``pytest -s``)."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.agents import agent_env, claude_exec, codex_lead, codex_provider, write_report_arguments
from tests.support.cli import cli
from tests.support.model_anthropic import AnthropicModel
from tests.support.model_openai import OpenAIModel
from tests.support.model_server import Block, Text, ToolCall, Turn, Until
from tests.support.readme import CLONE, FENCE, README, ROOT, filled, region

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # the real agent CLIs and server processes

CODEX_LEAD = (
    "handoff-mcp config --role lead --client codex >> ~/.codex/config.toml",
    "handoff-mcp trust-codex-hooks",
)


def blocks() -> list[tuple[str, str]]:
    return [(info.split()[0], body) for info, body in FENCE.findall(region("walkthrough"))]


def json_block(tool: str) -> str:
    found: list[str] = [body for info, body in FENCE.findall(region("walkthrough")) if info.split()[1:2] == [tool]]
    return found[0]


def shell(script: str, cwd: Path, env: dict[str, str]) -> str:
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script.replace(CLONE, str(ROOT))],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, f"{script}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def parsed(text: str) -> dict[str, Any]:
    return dict(json.loads(text[text.index("{") : text.rindex("}") + 1]))


class Walk:
    """One walk through the README: the Lead's script, the executor started from what it printed."""

    def __init__(self, lead: str, executor: str, home: Path, project: Path, tmp_path: Path) -> None:
        self.lead, self.executor, self.home, self.project, self.tmp_path = lead, executor, home, project, tmp_path
        namespace = {"namespace": "mcp__handoff"} if lead == "codex" else {}
        self.call: Callable[[str, dict[str, Any]], ToolCall] = (
            (lambda tool, args: ToolCall(tool, args, **namespace)) if lead == "codex" else
            (lambda tool, args: ToolCall(f"mcp__handoff__{tool}", args))
        )  # fmt: skip
        self.outputs = OpenAIModel.outputs if lead == "codex" else AnthropicModel.tool_results
        self.create = self.call("create_task", json.loads(json_block("create_task")))
        self.steps: dict[str, ToolCall] = {}
        self.created: dict[str, Any] = {}
        self.executor_seconds = 0.0

    def turns(self) -> list[Turn]:
        """create_task once the Lead's CLI lists the server's tools; then, the executor having run, the
        README's wait, read and status."""
        tool = "mcp__handoff" if self.lead == "codex" else "mcp__handoff__create_task"
        waiting = (
            [ToolCall("exec_command", {"cmd": "true"})]
            if self.lead == "codex"
            else [ToolCall("WaitForMcpServers", {"servers": ["handoff"]})]
        )
        ready = Until(lambda body: any(t.get("name") == tool for t in body.get("tools", [])), [self.create], waiting)
        return [ready, self._dispatched, self._then("read_handoff"), self._then("handoff_status"), [Text("Done.")]]

    def values(self) -> dict[str, str]:
        ref = self.created["ref"]
        token, sha = self.created["report_token"], self.created["task_sha256"]
        return {"REF": ref, "ROUND": ref.split("/")[1], "TOKEN": token, "TASK_SHA256": sha}

    def _dispatched(self, body: dict[str, Any]) -> list[Block]:
        self.created = parsed(self.outputs(body)[self.create.call_id])
        start = time.perf_counter()
        self._run_executor()
        self.executor_seconds = time.perf_counter() - start
        return [self._step("wait_for_reports")]

    def _then(self, tool: str) -> Callable[[dict[str, Any]], list[Block]]:
        return lambda _: [self._step(tool)]

    def _step(self, tool: str) -> ToolCall:
        self.steps[tool] = self.call(tool, json.loads(filled(json_block(tool), self.values())))
        return self.steps[tool]

    def _run_executor(self) -> None:
        """The printed command pasted into a shell in the project, its model doing the README's work."""
        work = next(body for info, body in blocks() if info == "sh" and "notes/hello.txt" in body).strip()
        arguments = json.loads(filled(json_block("write_report"), self.values()))
        assert arguments == write_report_arguments(self.created["dispatch_message"]) | {
            k: v for k, v in arguments.items() if k not in ("ref", "token", "task_sha256")
        }
        if self.executor == "claude":
            report = ToolCall("mcp__handoff__write_report", arguments)
            script: list[Turn] = [[ToolCall("Bash", {"command": work})], [report], [Text("Done.")]]
            with AnthropicModel(script) as model:
                env = agent_env(self.home, model.url)
                command = self.created["executor_config"]["claude_code_command"]
                shell(command, self.project, env | {"PATH": f"{Path(cli('claude')).parent}:{env['PATH']}"})
            assert '"created":true' in AnthropicModel.tool_results(model.main_requests[-1])[report.call_id].replace(
                " ", ""
            )
            return
        report = ToolCall("write_report", arguments, namespace="mcp__handoff")
        script = [[ToolCall("exec_command", {"cmd": work})], [report], [Text("Done.")]]
        with OpenAIModel(script) as model:
            codex_provider(model.url, self.tmp_path, self.home)
            env = agent_env(self.home, model.url)
            shell(
                self.created["executor_config"]["codex_command"],
                self.project,
                env | {"PATH": f"{Path(cli('codex')).parent}:{env['PATH']}"},
            )
        assert '"created":true' in OpenAIModel.outputs(model.main_requests[-1])[report.call_id].replace(" ", "")


def lead_setup(lead: str, home: Path, project: Path, env: dict[str, str]) -> None:
    """Steps 1 and 2 as printed: the change, then the Lead's configuration (Claude Code's block, or the
    two Codex commands the README gives beside it)."""
    sh = [body for info, body in blocks() if info == "sh"]
    shell(sh[0], home, env)  # step 1: it cds into ~/my-project itself
    if lead == "claude":
        shell(sh[1], project, env)
        return
    assert all(line in README.read_text().replace("\n", " ") for line in CODEX_LEAD)
    shell(CODEX_LEAD[0], project, env)  # the Lead's config first: the trust step reads it


@pytest.mark.parametrize("executor", ["claude", "codex"])
@pytest.mark.parametrize("lead", ["claude", "codex"])
def test_the_first_dispatch_runs_as_printed_twice_in_a_row(lead: str, executor: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    project = home / "my-project"
    project.mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=project, check=True, timeout=60)
    env = agent_env(home, "http://127.0.0.1:9") | {"PATH": f"{Path(cli('codex')).parent}:{agent_env(home, '')['PATH']}"}
    env |= {"XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"], "XDG_CONFIG_HOME": os.environ["XDG_CONFIG_HOME"]}
    timings = []
    for round_ in (1, 2):  # the second: the next dispatch, steps 3 to 7 (the configuration is made once)
        start = time.perf_counter()
        if round_ == 1:
            lead_setup(lead, home, project, env)
        walk = Walk(lead, executor, home, project, tmp_path)
        if lead == "claude":
            with AnthropicModel(walk.turns()) as model:
                run = claude_exec("claude", "Dispatch the README's task.", project, agent_env(home, model.url) | {
                    k: env[k] for k in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME")
                }, "--allowedTools", "mcp__handoff")  # fmt: skip
            last = model.main_requests[-1]
        else:
            with OpenAIModel(walk.turns()) as model:
                codex_provider(model.url, tmp_path, home)
                if round_ == 1:
                    shell(CODEX_LEAD[1], project, env)  # trusted once: the Lead runs with no bypass flag
                lead_env = agent_env(home, model.url) | {k: env[k] for k in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME")}
                run = codex_lead("Dispatch the README's task.", project, lead_env, trust_hooks=False)
            last = model.main_requests[-1]
        assert run.returncode == 0, run
        results = {tool: walk.outputs(last)[step.call_id] for tool, step in walk.steps.items()}
        ref = walk.created["ref"]
        assert f"{ref} REPORT.md" in results["wait_for_reports"]
        assert "Added notes/hello.txt" in results["read_handoff"]
        assert ref in results["handoff_status"]
        assert (project / "notes" / "hello.txt").read_text() == "hello\n"
        printed = shell(
            filled(next(body for info, body in reversed(blocks()) if info == "sh"), walk.values()), project, env
        )
        assert "returned:completed" in printed  # step 7: handoff-validate passed, then the status
        timings.append((round_, time.perf_counter() - start, walk.executor_seconds))
    print(f"\nwalk-through, Lead {lead}, executor {executor}: " + "; ".join(
        f"round {r}: {total:.1f} s (executor {executor_s:.1f} s)" for r, total, executor_s in timings
    ))  # fmt: skip

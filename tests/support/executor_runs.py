"""An executor's run against a scripted model: the Lead's calls, the executor's tool calls."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.support.agents import write_report_arguments
from tests.support.calls import FOCUS, call, task_args
from tests.support.model_openai import FREEFORM
from tests.support.model_server import ToolCall, Turn, Until
from tests.support.wire import serve_command


async def lead_call(
    project: Path, secret_file: Path, name: str, home: Path | None = None, **args: Any
) -> dict[str, Any]:
    """One tool of the Lead's stdio server (under ``home``: the HOME the executors ran with)."""
    command = serve_command("lead", project, secret_file)
    # This user's cache, as the executor's sandboxed launch found it: its home lies there.
    env = {"XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"]} | ({"HOME": str(home)} if home is not None else {})
    async with Client(StdioServerParameters(command=command[0], args=command[1:], env=env)) as lead:
        return await call(lead, name, **args)


def once_connected(call: ToolCall, then: Turn | None = None) -> Until:
    """``call`` (or ``then``) once Claude Code lists the tool; meanwhile, what a model does: wait for
    the MCP servers."""
    turn = [call] if then is None else then
    assert not isinstance(turn, Until)
    return Until(has_tool(call.name), turn, [ToolCall("WaitForMcpServers", {"servers": ["handoff"]})])


async def dispatch(project: Path, secret_file: Path, **overrides: Any) -> dict[str, Any]:
    """``create_task`` through the Lead's stdio server, as the Lead's client calls it."""
    return await lead_call(project, secret_file, "create_task", **task_args(**overrides))


def has_tool(name: str) -> Callable[[dict[str, Any]], bool]:
    """Whether a Messages request offers the tool ``name`` (an MCP server's tools arrive once it connects)."""
    return lambda body: any(tool.get("name") == name for tool in body.get("tools", []))


def report_call(created: dict[str, Any]) -> ToolCall:
    arguments = write_report_arguments(created["dispatch_message"])
    arguments |= {"status": "completed", "focused": FOCUS, "artifacts": "src/a1/new.py"}
    return ToolCall("mcp__handoff__write_report", arguments | {"verification": "pytest: exit 0"})


def patch(*files: str) -> ToolCall:
    """``apply_patch`` as a freeform call, adding each file (relative to the working directory)."""
    body = "".join(f"*** Add File: {name}\n+VALUE = 1\n" for name in files)
    return ToolCall(f"{FREEFORM}apply_patch", {"input": f"*** Begin Patch\n{body}*** End Patch\n"})

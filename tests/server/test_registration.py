"""One registration point: every tool is built by ``registration.tool`` and translates core refusals."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS

from handoff_core.errors import OwnershipConflict
from server.config import ROLE_TOOLS, Role, Settings
from server.mcp.app import DeferredTools, HandoffServer, build_server
from server.mcp.registration import READ_ONLY, HandoffTool, tool
from tests.support.calls import call, task_args
from tests.support.content import text_of

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("role", ["lead", "executor"])
def test_every_tool_of_a_role_is_registered_through_the_one_registration_point(
    settings_for: Callable[[Role], Settings], role: Role
) -> None:
    server = build_server(settings_for(role))
    assert isinstance(server, HandoffServer)
    tools = server.tools.manager().list_tools()
    assert all(isinstance(registered, HandoffTool) for registered in tools)
    assert [registered.name for registered in tools] == list(ROLE_TOOLS[role])  # the one list of each role's tools


@pytest.mark.parametrize("role", ["lead", "executor"])
def test_every_tool_is_a_module_level_function_whose_services_are_resolved_not_closed_over(
    settings_for: Callable[[Role], Settings], role: Role
) -> None:
    server = build_server(settings_for(role))
    assert isinstance(server, HandoffServer)
    for registered in server.tools.manager().list_tools():
        fn = registered.fn
        assert fn.__qualname__ == fn.__name__, registered.name  # not defined inside another function
        assert getattr(sys.modules[fn.__module__], fn.__name__) is fn, registered.name
        assert fn.__closure__ is None, registered.name
        assert "services" not in registered.parameters["properties"], registered.name  # resolved, not asked for


def refusing() -> str:
    """Refuses like the core does."""
    raise OwnershipConflict("held by 2026-11-30-demo/20261130T044500Z/001-a; wait for its REPORT")


def crashing() -> str:
    """Fails the way nothing should."""
    raise RuntimeError("secret internals")


@pytest.fixture
def tiny() -> MCPServer:
    return MCPServer("tiny", tools=[tool(refusing, READ_ONLY), tool(crashing, READ_ONLY)])


async def test_a_core_refusal_reaches_the_model_with_its_code_and_what_to_do(tiny: MCPServer, mode: str) -> None:
    async with Client(tiny, mode=mode) as client:
        result = await client.call_tool("refusing", {})
    assert result.is_error
    assert text_of(result) == (
        "Error executing tool refusing: ownership_conflict: "
        "held by 2026-11-30-demo/20261130T044500Z/001-a; wait for its REPORT"
    )


async def test_an_unexpected_exception_stays_hidden(tiny: MCPServer, mode: str) -> None:
    async with Client(tiny, mode=mode) as client:
        result = await client.call_tool("crashing", {})
    assert result.is_error
    assert "secret internals" not in text_of(result)


async def test_a_missing_handoff_file_is_the_sdks_not_found(lead: Client) -> None:
    created = await call(lead, "create_task", **task_args())
    with pytest.raises(MCPError) as missing:
        await lead.read_resource(f"handoff://{created['ref']}/REPORT.md")
    assert missing.value.error.code == INVALID_PARAMS
    assert "not_found" in missing.value.error.message
    with pytest.raises(MCPError) as unknown:
        await lead.read_resource(f"handoff://{created['ref']}/NOTES.md")
    assert unknown.value.error.code == INVALID_PARAMS


def _keys(schema: object) -> set[str]:
    """Every key of a schema's objects, at every depth, ``properties`` mappings (whose keys are names) aside."""
    if isinstance(schema, list):
        return set().union(*map(_keys, schema)) if schema else set()
    if not isinstance(schema, dict):
        return set()
    found = set(schema)
    for key, value in schema.items():
        found |= set().union(*map(_keys, value.values())) if key in ("properties", "$defs") else _keys(value)
    return found


@pytest.mark.parametrize("role", ["lead", "executor"])
def test_output_schemas_repeat_no_field_as_required_or_default(
    settings_for: Callable[[Role], Settings], role: Role
) -> None:
    server = build_server(settings_for(role))
    assert isinstance(server, HandoffServer)
    tools = server.tools.manager().list_tools()
    assert all(registered.output_schema is not None for registered in tools)
    assert [t.name for t in tools if {"required", "default"} & _keys(t.output_schema)] == []
    read_task = next(t for t in tools if t.name == "read_task")
    assert read_task.parameters["required"] == ["ref"]  # inputs keep theirs: a missing argument is refused


async def test_a_result_still_carries_every_field_of_its_model(lead: Client) -> None:
    created = await call(lead, "create_task", **task_args())
    assert "warnings" in created
    status = await call(lead, "handoff_status", view="all")
    assert set(status["tasks"][0]) >= {"ref", "claim", "problems", "proof", "audit", "verification", "attention"}
    assert status["tasks"][0]["verification"] == ""  # a field at its default is sent, not left out


# A fresh interpreter: which modules the server has imported is read from its own ``sys.modules``.
FIRST_ANSWER = """
import asyncio, json, sys
from pathlib import Path
from mcp import Client
from server.config import Settings
from server.mcp.app import build_server

root = Path(sys.argv[1])
state = root / "speculo" / ".speculo"
settings = Settings(role="lead", project_root=root, state_root=state, secret_file=root / "secret")
TOOLS = "server.mcp.tools.lead"

async def main():
    seen = {}
    async with Client(build_server(settings)) as client:
        seen["initialized"] = TOOLS in sys.modules
        seen["tools"] = [tool.name for tool in (await client.list_tools()).tools]
        seen["listed"] = TOOLS in sys.modules
    print(json.dumps(seen))

asyncio.run(main())
"""


@pytest.mark.slow
def test_a_server_answers_initialize_before_it_imports_its_tools_and_lists_every_one_after(project: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", FIRST_ANSWER, str(project)], capture_output=True, text=True, timeout=60, check=True
    )
    seen = json.loads(done.stdout)
    assert seen["initialized"] is False  # the first answer needs none of the tools
    assert seen["listed"] is True
    assert seen["tools"] == list(ROLE_TOOLS["lead"])


def test_deferred_tools_are_built_once_however_many_ask_at_once() -> None:
    builds: list[int] = []
    start = threading.Barrier(8)

    def build() -> list[Tool]:
        builds.append(1)
        return [tool(refusing, READ_ONLY)]

    deferred = DeferredTools(build)
    found: list[object] = []

    def ask() -> None:
        start.wait(timeout=10)
        found.append(deferred.manager().get_tool("refusing"))

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert len(builds) == 1
    assert len(found) == 8
    assert len({id(each) for each in found}) == 1

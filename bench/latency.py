"""Per-call latency of the hot tools: in memory, over stdio, and the core call alone."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from bench.stats import summary
from bench.trees import make_change
from handoff_core.contract.ids import Ref
from handoff_core.contract.report import Report
from handoff_core.contract.scope import Scope
from handoff_core.contract.task import TaskBody
from handoff_core.services.writing.dispatch import TaskRequest
from handoff_core.services.writing.store import Store
from server.config import Role, Settings
from server.mcp.app import build_server

FOCUS = "Reviewed it. Found nothing blocking. Stopped here. Next: merge."


def task_args(change: str, index: int, session: str | None) -> dict[str, Any]:
    args: dict[str, Any] = {
        "change": change,
        "topic": f"bench-{index + 1}",
        "kind": "review",
        "goal": f"Review part {index}.",
        "inputs": "the diff",
        "acceptance": "findings listed",
        "read_only": ["src/**"],
    }
    return args | ({"session": session} if session else {})


def report_args(created: dict[str, Any]) -> dict[str, Any]:
    return {
        "ref": created["ref"],
        "token": created["report_token"],
        "status": "completed",
        "focused": FOCUS,
        "artifacts": "none",
        "verification": "read only",
        "task_sha256": created["task_sha256"],
    }


async def _measure(call: Callable[[int], Awaitable[Any]], calls: int) -> dict[str, float]:
    times = []
    for index in range(calls):
        start = time.perf_counter()
        await call(index)
        times.append(time.perf_counter() - start)
    return summary(times)


async def tool_latency(client: Client, change: str, status_change: str, calls: int) -> dict[str, Any]:
    """create_task, write_report, validate_handoff, read_task and handoff_status through ``client``."""
    created: list[dict[str, Any]] = []
    first = await client.call_tool("create_task", task_args(change, -1, None))
    assert first.structured_content is not None, first.content
    session = first.structured_content["ref"].split("/")[1]

    async def create(i: int) -> None:
        result = await client.call_tool("create_task", task_args(change, i, session))
        assert not result.is_error, result.content
        assert result.structured_content is not None
        created.append(result.structured_content)

    async def report(i: int) -> None:
        result = await client.call_tool("write_report", report_args(created[i]))
        assert not result.is_error, result.content

    ref = created_ref = ""

    async def validate(_: int) -> None:
        assert not (await client.call_tool("validate_handoff", {"ref": ref, "stage": "return"})).is_error

    async def read(_: int) -> None:
        assert not (await client.call_tool("read_task", {"ref": created_ref})).is_error

    async def status(_: int) -> None:
        assert not (await client.call_tool("handoff_status", {"change": status_change})).is_error

    result = {"create_task": await _measure(create, calls), "write_report": await _measure(report, calls)}
    ref = created_ref = created[0]["ref"]
    result |= {
        name: await _measure(fn, calls)
        for name, fn in (("validate_handoff", validate), ("read_task", read), ("handoff_status", status))
    }
    return result


async def client_validation(client: Client, status_change: str, calls: int) -> dict[str, float]:
    """What the SDK client itself spends checking a handoff_status result against its output schema."""
    result = await client.call_tool("handoff_status", {"change": status_change})

    async def check(_: int) -> None:
        await client.session.validate_tool_result("handoff_status", result)

    return await _measure(check, calls)


def core_latency(store: Store, change: str, status_change: str, calls: int) -> dict[str, Any]:
    """The same operations on the core directly: the floor under the MCP layer."""
    first = store.create_task(_request(change, -1, None))
    stored = []

    def timed(fn: Callable[[int], object]) -> dict[str, float]:
        times = []
        for index in range(calls):
            start = time.perf_counter()
            fn(index)
            times.append(time.perf_counter() - start)
        return summary(times)

    result = {"create_task": timed(lambda i: stored.append(store.create_task(_request(change, i, first.ref.session))))}
    result["write_report"] = timed(lambda i: store.write_report(_report(stored[i].ref), change, stored[i].sha256))
    ref = stored[0].ref
    result["validate_handoff"] = timed(lambda _: store.queries.validate(ref, "return"))
    result["read_task"] = timed(lambda _: store.queries.read_task(ref))
    result["handoff_status"] = timed(lambda _: store.queries.status(status_change))
    return result


def _request(change: str, index: int, session: str | None) -> TaskRequest:
    body = TaskBody(
        kind="review",
        goal=f"Review part {index}.",
        inputs="the diff",
        scope=Scope(workspace=None, writable=(), read_only=("src/**",)),
        acceptance="findings listed",
    )
    return TaskRequest(change=change, topic=f"bench-{index + 1}", body=body, session=session)


def _report(ref: Ref) -> Report:
    return Report(
        session=ref.session,
        task=ref.task,
        status="completed",
        focused=FOCUS,
        artifacts="none",
        verification="read only",
    )


def status_tree(state_root: Path, change: str, tasks: int) -> None:
    make_change(state_root, change)
    store = Store(state_root)
    first = store.create_task(_request(change, 0, None))
    for index in range(1, tasks):
        store.create_task(_request(change, index, first.ref.session))


def settings(project: Path, secret: Path, role: Role = "lead") -> Settings:
    return Settings(role=role, project_root=project, state_root=project / "speculo" / ".speculo", secret_file=secret)


async def in_memory(project: Path, secret: Path, change: str, status_change: str, calls: int) -> dict[str, Any]:
    async with Client(build_server(settings(project, secret)), mode="legacy") as client:
        result = await tool_latency(client, change, status_change, calls)
        result["client_output_check_handoff_status"] = await client_validation(client, status_change, calls)
        return result


async def over_stdio(command: list[str], change: str, status_change: str, calls: int) -> dict[str, Any]:
    async with Client(StdioServerParameters(command=command[0], args=command[1:])) as client:
        return await tool_latency(client, change, status_change, calls)

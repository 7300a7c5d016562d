"""Lead-only tools: dispatch, locator, capture and release."""

from __future__ import annotations

from typing import Annotated, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from handoff_core import watch
from handoff_core.errors import HandoffError, InvalidContent
from handoff_core.store import TaskRequest
from handoff_core.task import Scope, SharedPath
from server.app import Context, ref_of, tool_errors
from server.dispatch import dispatch_message, executor_config
from server.models import CreatedTask, Waited, Written
from server.shared_tools import READ_ONLY, WRITE_ONCE, Ref, Text

Globs = Annotated[list[str], Field(description="project-relative globs")]
CREATE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)


def shared_paths(entries: list[str]) -> tuple[SharedPath, ...]:
    pairs = [entry.rpartition("=") for entry in entries]
    if any(not path or not owner for path, _, owner in pairs):
        raise InvalidContent("shared entries are PATH=OWNER, e.g. pyproject.toml=lead")
    return tuple(SharedPath(path, owner) for path, _, owner in pairs)


def register(server: MCPServer, context: Context) -> None:
    store = context.store

    @server.tool(annotations=CREATE)
    @tool_errors
    def create_task(
        change: Annotated[str, Field(description="existing active change id, YYYY-MM-DD-topic")],
        topic: Annotated[str, Field(description="lowercase-hyphen topic; the number is allocated")],
        kind: Literal["implementation", "review", "research", "test-observation"],
        goal: Text,
        inputs: Text,
        acceptance: Text,
        workspace: Annotated[Literal["current", "required"] | None, Field(description="implementation only")] = None,
        writable: Globs = [],  # noqa: B006 - never mutated; keeps the schema a plain array
        read_only: Globs = [],  # noqa: B006
        shared: Annotated[list[str], Field(description="PATH=OWNER entries")] = [],  # noqa: B006
        artifacts: Annotated[list[str], Field(description="outputs a read-only task may write")] = [],  # noqa: B006
        scope_notes: Text = "",
        return_notes: Text = "",
        ticket: str | None = None,
        session: Annotated[str | None, Field(description="round to add to; omit to open a new round")] = None,
        force_new: Annotated[bool, Field(description="true: never return an identical task made just before")] = False,
    ) -> CreatedTask:
        """Allocate ids, publish a frozen TASK.md, and return the executor's dispatch message and token."""
        scope = Scope(workspace, tuple(writable), tuple(read_only), shared_paths(shared), tuple(artifacts), scope_notes)
        request = TaskRequest(
            change, topic, kind, goal, inputs, scope, acceptance, return_notes, ticket, session, force_new
        )
        stored = store.create_task(request)
        token = context.token(stored.ref)
        task_rel = context.in_project(stored.path)
        report_rel = context.in_project(stored.path.with_name("REPORT.md"))
        return CreatedTask(
            ref=str(stored.ref),
            task_path=str(stored.path),
            task_path_in_project=task_rel,
            report_path_in_project=report_rel,
            task_sha256=stored.sha256,
            report_token=token,
            dispatch_message=dispatch_message(stored, token, task_rel, report_rel),
            executor_config=executor_config(context.settings),
        )

    @server.tool(annotations=READ_ONLY)
    async def wait_for_reports(
        refs: Annotated[list[str], Field(description="refs to watch")],
        timeout_s: Annotated[float, Field(description="at most 50")] = 30.0,
    ) -> Waited:
        """Return as soon as any listed task gets a REPORT or RELEASE, or at the timeout; call again to go on."""
        try:
            result = await watch.wait_for_reports(store, [ref_of(ref) for ref in refs], timeout_s)
        except HandoffError as exc:
            raise ToolError(f"{exc.code}: {exc.message}") from exc
        return Waited(
            arrived=[f"{a.ref} {a.file}" for a in result.arrived],
            pending=[str(ref) for ref in result.pending],
            timed_out=result.timed_out,
            waited_seconds=result.waited_seconds,
        )

    @server.tool(annotations=WRITE_ONCE)
    @tool_errors
    def record_session_locator(
        ref: Ref, path: Annotated[str, Field(description="confirmed absolute path of the executor's session log")]
    ) -> Written:
        """Record the executor's confirmed session-log path (same path again is a no-op)."""
        stored = store.record_session_locator(ref_of(ref), path)
        return Written(ref=ref, path=str(stored.path), sha256=stored.sha256, created=stored.created)

    @server.tool(annotations=WRITE_ONCE)
    @tool_errors
    def capture_report(
        ref: Ref,
        status: Literal["completed", "blocked", "failed", "cancelled"],
        original_locator: Annotated[str, Field(description="where the text came from, e.g. a call id")],
        text: Annotated[str, Field(description="the executor's reply, verbatim")],
    ) -> Written:
        """Capture an executor's text-only reply verbatim as its REPORT (Captured-by: Lead)."""
        stored = store.capture_report(ref_of(ref), status, original_locator, text)
        return Written(ref=ref, path=str(stored.path), sha256=stored.sha256, created=stored.created)

    @server.tool(annotations=WRITE_ONCE)
    @tool_errors
    def release_writer(
        ref: Ref,
        kind: Annotated[Literal["stopped", "none"], Field(description="stopped: seen to stop; none: never ran")],
        evidence: Annotated[str, Field(description="stop locator, or why there is no writer")],
        details: Text = "",
    ) -> Written:
        """End a task's writer claim without a REPORT, with evidence (RELEASE.md, write-once)."""
        stored = store.release_writer(ref_of(ref), kind, evidence, details)
        return Written(ref=ref, path=str(stored.path), sha256=stored.sha256, created=stored.created)

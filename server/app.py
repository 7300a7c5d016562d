"""The MCP adapter: one MCPServer per role; each tool gets the store, calls one core function.

Core errors escape as MCP tool errors whose text starts with the error's stable code.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError

from handoff_core.contract.ids import Ref, check_ref
from handoff_core.errors import HandoffError
from handoff_core.services.store import Store
from handoff_core.services.tokens import load_secret, report_token
from server.config import Settings

F = TypeVar("F", bound=Callable[..., Any])
HANDOFF_FILES = ("TASK.md", "REPORT.md", "session-locator.json")
INSTRUCTIONS = {
    "lead": (
        "Handoff tools for a Lead: create_task dispatches a frozen TASK and returns the executor's "
        "message; read REPORTs with read_task/validate_handoff/handoff_status. Files are evidence, "
        "not acceptance."
    ),
    "executor": (
        "Handoff tools for an executor: read_task, then write_report once with the ref and token from "
        "your dispatch message, then reply with the returned reply_line."
    ),
}


def tool_errors(fn: F) -> F:
    """Let core refusals reach the model as tool errors carrying their stable code."""

    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def waiting(*args: Any, **kwargs: Any) -> Any:
            try:
                return await fn(*args, **kwargs)
            except HandoffError as exc:
                raise ToolError(f"{exc.code}: {exc.message}") from exc

        return waiting  # type: ignore[return-value]

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except HandoffError as exc:
            raise ToolError(f"{exc.code}: {exc.message}") from exc

    return wrapper  # type: ignore[return-value]


class Context:
    """What every tool body needs: the settings, the store and (lazily) the token secret."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.store = Store(settings.state_root, settings.project_root, writer_cap=settings.writer_cap)
        self._secret: bytes | None = None

    def token(self, ref: Ref) -> str:
        return report_token(self.secret(), self.settings.state_root, ref)

    def secret(self) -> bytes:
        if self._secret is None:
            self._secret = load_secret(self.settings.secret_file, self.settings.project_root)
        return self._secret


def build_server(settings: Settings) -> MCPServer:
    from server import history_tools, lead_tools, shared_tools

    context = Context(settings)
    tools = shared_tools.tools(context) + history_tools.shared(context)
    if settings.role == "lead":
        tools += lead_tools.tools(context) + history_tools.lead(context)
    server: MCPServer = MCPServer(
        "handoff-mcp", instructions=INSTRUCTIONS[settings.role], version="0.1.0", log_level="WARNING", tools=tools
    )
    _register_resources(server, context)
    return server


def _register_resources(server: MCPServer, context: Context) -> None:
    @server.resource(
        "handoff://{change}/{session}/{task}/{name}",
        name="handoff-file",
        description="A task's TASK.md, REPORT.md or session-locator.json, as stored.",
        mime_type="text/plain",
    )
    def handoff_file(change: str, session: str, task: str, name: str) -> str:
        if name not in HANDOFF_FILES:
            raise ResourceError(f"{name} is not a handoff file; use one of {', '.join(HANDOFF_FILES)}")
        try:
            return context.store.read_file(check_ref(change, session, task), name).decode("utf-8", "replace")
        except HandoffError as exc:
            raise ResourceError(f"cannot read {name} of {change}/{session}/{task}: {exc}") from exc

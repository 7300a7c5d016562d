"""The MCP adapter: one MCPServer per role. Each tool is a module-level function that calls one core
function; the SDK resolves its ``Services`` (``registration.ServicesArg``: the server's ``services``,
made on first use) and ``registration`` turns core refusals into tool errors for every tool at once.

A server answers ``initialize`` before it builds its tools: ``DeferredTools`` imports the tool modules
(and, through them, most of the core) and builds every tool the first time anything asks for a tool
(``tools/list``, a call), all at once. Start-up to the first answer pays the SDK, the settings and
this module; the tools are there, complete, before any answer that names them.
``HandoffServer`` lists and calls them through the SDK's public ``list_tools`` and ``call_tool``.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from importlib.metadata import version
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError
from mcp.server.mcpserver.tools import Tool, ToolManager
from mcp.types import CallToolResult, InputRequiredResult
from mcp.types import Tool as ListedTool

from handoff_core.contract.ids import Ref, check_ref
from handoff_core.errors import InvalidArguments, RoleRefused, ScopeRefused
from handoff_core.layout import READABLE_FILES
from server.config import LEAD_TOOLS, ROLE_TOOLS, Role, Settings
from server.mcp.nesting import too_deep
from server.mcp.registration import resource_errors, tool_errors
from server.mcp.services import HANDOFF_URI, TASK_SCOPE, Services, bearer_ref, check_uri_scope

if TYPE_CHECKING:  # only the team server builds these: stdio start-up stays light
    from mcp.server.auth.provider import TokenVerifier
    from mcp.server.auth.settings import AuthSettings
    from mcp.server.subscriptions import SubscriptionBus

__all__ = ["INSTRUCTIONS", "DeferredTools", "HandoffServer", "HttpOptions", "build_server"]

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


@dataclass(kw_only=True, frozen=True)
class HttpOptions:
    """What a server behind the HTTP team endpoint needs: the SDK's auth, its bus, the executors' URL."""

    auth: AuthSettings
    token_verifier: TokenVerifier
    bus: SubscriptionBus
    executor_url: str
    on_dispatch: Callable[[Ref], None] | None = None  # told of each task the Lead dispatches
    events: Callable[[], str] | None = None  # for handoff_status: "polled: …" when the watcher polls
    middleware: tuple[Any, ...] = ()  # the SDK's ServerMiddleware (the arrivals' subscriptions)


def _token_ref(context: Context[Any, Any] | None) -> Ref:
    """The task an HTTP session's bearer token names (set by the SDK's auth middleware)."""
    request = getattr(context.request_context, "request", None) if context is not None else None
    if (ref := bearer_ref(request)) is None:
        raise ScopeRefused("this endpoint needs a task's report token as bearer")
    return ref


class HandoffServer(MCPServer):
    """An MCPServer that answers a call to the other role's tool by naming the role and the way out, and
    scopes every call to one task: behind the HTTP executor endpoint the one its bearer token names, on
    stdio the one given with ``--ref`` (``task``). The check itself is ``services.check_scope``, run by
    every tool (``registration``) and every resource read, against ``TASK_SCOPE`` set here. ``services``
    is what its tools' ``ServicesArg`` resolves to."""

    def __init__(
        self,
        role: Role,
        services: Callable[[], Services],
        task_scoped: bool = False,
        task: Ref | None = None,
        tools: Callable[[], list[Tool]] = list,
        **kwargs: Any,
    ) -> None:
        super().__init__("handoff-mcp", **kwargs)
        self.role, self.task_scoped, self.task = role, task_scoped, task
        self.services = services
        self.tools = DeferredTools(tools)
        self._reading_ahead = threading.Lock()  # taken once and kept: the rows are read ahead once

    def read_ahead(self) -> None:
        """A Lead's server reads the status rows the server before it kept, on a thread of its own, once
        its tools are listed: its first handoff_status waits for it, then answers as a warm one does,
        and the tools/list answer never waits for it."""
        if self.role == "lead" and self._reading_ahead.acquire(blocking=False):
            threading.Thread(target=self._read_rows, name="handoff-rows", daemon=True).start()

    def _read_rows(self) -> None:
        with contextlib.suppress(Exception):  # a tool call makes the services again, and reports what failed
            self.services().queries.read_rows()

    def _scope(self, context: Context[Any, Any] | None) -> Ref | None:
        return _token_ref(context) if self.task_scoped else self.task

    async def list_tools(self) -> list[ListedTool]:
        """Every tool as ``tools/list`` shows it: the SDK's listing of each, field for field."""
        listed = [
            ListedTool(
                name=info.name,
                title=info.title,
                description=info.description,
                input_schema=info.parameters,
                output_schema=info.output_schema,
                annotations=info.annotations,
                icons=info.icons,
                _meta=info.meta,
            )
            for info in self.tools.manager().list_tools()
        ]
        self.read_ahead()
        return listed

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        with tool_errors(name):
            if (refusal := too_deep(arguments)) is not None:
                raise InvalidArguments(refusal)
            if name not in ROLE_TOOLS[self.role] and name in LEAD_TOOLS:
                raise RoleRefused(
                    f"{name} is a Lead tool and this server runs as {self.role}; ask the Lead to call it, "
                    f"or use this role's tools ({', '.join(ROLE_TOOLS[self.role])})"
                )
            scope = TASK_SCOPE.set(self._scope(context))
        try:
            called = context if context is not None else Context(mcp_server=self)  # a call in process
            result = await self.tools.manager().call_tool(name, arguments, called, convert_result=True)
            assert isinstance(result, CallToolResult | InputRequiredResult)  # what convert_result makes
            return result
        finally:
            TASK_SCOPE.reset(scope)

    async def read_resource(self, uri: Any, context: Context[Any, Any] | None = None) -> Any:
        with resource_errors(str(uri)):
            task = self._scope(context)
            check_uri_scope(str(uri), task)
            scope = TASK_SCOPE.set(task)
        try:
            return await super().read_resource(uri, context)
        finally:
            TASK_SCOPE.reset(scope)


class DeferredTools:
    """A server's tools, built by ``build`` the first time any is asked for (listed, called), once,
    under a lock; held in the SDK's ``ToolManager``, which calls them."""

    def __init__(self, build: Callable[[], list[Tool]]) -> None:
        self._build: Callable[[], list[Tool]] | None = build
        self._built = ToolManager()
        self._lock = threading.Lock()

    def manager(self) -> ToolManager:
        with self._lock:
            if self._build is not None:
                self._built, self._build = ToolManager(tools=self._build()), None
        return self._built


class Deferred:
    """One ``Services``, made on first use: the tools and the resource reads share it."""

    def __init__(self, make: Callable[[], Services]) -> None:
        self._make: Callable[[], Services] | None = make
        self._made: Services | None = None
        self._lock = threading.Lock()

    def __call__(self) -> Services:
        with self._lock:
            if self._made is None:
                assert self._make is not None
                self._made, self._make = self._make(), None
        return self._made


def role_tools(role: Role) -> list[Tool]:
    """Every tool of ``role``, in its one list's order (``config.ROLE_TOOLS``). An executor imports only
    the modules of its own tools: the Lead's bring most of the core, which its tools/list would wait for."""
    from server.mcp.tools import history, shared

    tools = shared.tools() + history.shared()
    if role == "lead":
        from server.mcp.tools import coordination, exchange, lead, writer

        tools += lead.tools() + history.lead() + exchange.tools() + writer.tools() + coordination.tools()
    return tools


def build_server(settings: Settings, http: HttpOptions | None = None) -> MCPServer:
    services = Deferred(
        lambda: Services(
            settings,
            executor_url=http.executor_url if http else None,
            on_dispatch=http.on_dispatch if http else None,
            events=http.events if http else None,
        )
    )
    extra: dict[str, Any] = {}
    if http is not None:
        extra = {
            "auth": http.auth,
            "token_verifier": http.token_verifier,
            "subscriptions": http.bus,
            "middleware": list(http.middleware),
        }
    server = HandoffServer(
        settings.role,
        services,
        task_scoped=http is not None and settings.role == "executor",
        task=settings.task if settings.role == "executor" else None,
        instructions=INSTRUCTIONS[settings.role],
        version=version("handoff-mcp"),  # the installed package's, never a second literal
        log_level="WARNING",
        tools=partial(role_tools, settings.role),
        **extra,
    )
    _register_resources(server, services)
    return server


def _register_resources(server: MCPServer, services: Callable[[], Services]) -> None:
    @server.resource(
        HANDOFF_URI,
        name="handoff-file",
        description="A task's TASK.md, REPORT.md or session-locator.json, as stored.",
        mime_type="text/plain",
    )
    def handoff_file(change: str, session: str, task: str, name: str) -> str:
        if name not in READABLE_FILES:
            raise ResourceNotFoundError(f"{name} is not a handoff file; use one of {', '.join(READABLE_FILES)}")
        with resource_errors(f"{name} of {change}/{session}/{task}"):
            data = services().queries.read_file(check_ref(change, session, task), name)
        return data.decode("utf-8", "replace")

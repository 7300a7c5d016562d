"""The one registration point for tools: every tool is a ``HandoffTool`` built by ``tool()``.

A tool is a module-level function; what it needs besides its arguments it declares as a parameter the
SDK resolves before the body runs (``Annotated[T, Resolve(fn)]``, left out of the schema): ``ServicesArg``
is the server's ``Services``, made on first use (``services_of``).

Every tool call passes ``services.check_scope`` here, before its body runs: a task's session is held
to its task by the parameters the tool declares, one check for every tool.

This module is where core refusals become MCP errors, for every tool and resource alike:
``tool_errors`` for tools (``HandoffTool.run``, and the server's own role and scope checks), and
``resource_errors`` for resource reads. The SDK wraps an unexpected exception as
``UnexpectedToolError`` (its text hidden from the model); a ``HandoffError`` underneath is not
unexpected, so it is re-raised as a ``ToolError`` that reaches the model as ``Error executing tool
NAME: CODE: message``. A resource's refusal is a ``ResourceError`` (``ResourceNotFoundError`` for a
file that is not there, the SDK's -32602) carrying the same ``CODE: message``.

Schemas are kept small for the model's context window: pydantic titles every property after its
name ("ref" -> "Ref"), pure repetition. Titles and trivial defaults are dropped from schema
objects (never from a ``properties`` mapping, whose keys are names); optional parameters stay
optional because they are not ``required``. An output schema lists no ``required`` fields and no
defaults either (``sent_whole``): a result always carries every field of its model (the SDK dumps
it whole), so both would only say each field's name and value again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Annotated, Any, get_type_hints

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError, UnexpectedToolError
from mcp.server.mcpserver.resolve import Resolve
from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field, ValidationError

from handoff_core.errors import HandoffError, InvalidArguments, NotFound
from server.mcp.services import Services, check_scope

__all__ = [
    "CREATE",
    "READ_ONLY",
    "REPLACE",
    "WRITE_ONCE",
    "HandoffTool",
    "ServicesArg",
    "resource_errors",
    "sent_whole",
    "services_of",
    "tool",
    "tool_errors",
    "untitled",
]

# For a read-only tool the destructive and idempotent hints carry no meaning (MCP spec).
# Hints at their spec default are left out: readOnlyHint false, idempotentHint false.
# open_world_hint stays unset: every byte of tools/list is paid in each agent's context, and the
# executor's 6 KB buys a paged status instead. Unset reads as "may reach outside": the cautious side.
READ_ONLY = ToolAnnotations(read_only_hint=True)
CREATE = ToolAnnotations(destructive_hint=False)
WRITE_ONCE = ToolAnnotations(destructive_hint=False, idempotent_hint=True)
REPLACE = ToolAnnotations(idempotent_hint=True)  # a config file, replaced whole: the old content is gone


async def services_of(ctx: Context[Any, Any]) -> Services:
    """The ``Services`` of the server a call came to (``app.HandoffServer.services``), made on first use."""
    made = getattr(ctx.mcp_server, "services", None)
    if made is None:
        raise RuntimeError(f"{type(ctx.mcp_server).__name__} holds no handoff services; serve tools with HandoffServer")
    services = made()
    assert isinstance(services, Services)
    return services


# A tool's parameter for the server's Services: resolved by the SDK, not part of the tool's schema.
ServicesArg = Annotated[Services, Resolve(services_of)]


def _argument_problems(error: ValidationError) -> str:
    """One short line per problem, naming the field: not pydantic's dump with documentation URLs."""
    lines = []
    for problem in error.errors(include_url=False, include_input=False):
        field = ".".join(str(part) for part in problem["loc"]) or "arguments"
        expected = (problem.get("ctx") or {}).get("expected")
        lines.append(f"{field}: {'must be one of ' + str(expected) if expected else problem['msg'].lower()}")
    return "; ".join(lines)


@contextmanager
def tool_errors(name: str) -> Iterator[None]:
    """Core refusals escape as tool errors carrying their stable code; anything else stays hidden."""
    try:
        yield
    except HandoffError as exc:  # raised by the server itself, before the SDK runs the tool
        raise ToolError(f"Error executing tool {name}: {exc.code}: {exc.message}") from exc
    except UnexpectedToolError as exc:
        cause = exc.__cause__
        if isinstance(cause, HandoffError):
            raise ToolError(f"Error executing tool {name}: {cause.code}: {cause.message}") from cause
        raise
    except ToolError as exc:
        if isinstance(exc.__cause__, ValidationError):
            problems = _argument_problems(exc.__cause__)
            raise ToolError(f"Error executing tool {name}: {InvalidArguments.code}: {problems}") from exc.__cause__
        raise


@contextmanager
def resource_errors(what: str) -> Iterator[None]:
    """A refused resource read: not found as the SDK's not-found, any other refusal as a resource error."""
    try:
        yield
    except NotFound as exc:
        raise ResourceNotFoundError(f"{exc.code}: {exc.message}") from exc
    except HandoffError as exc:
        raise ResourceError(f"{exc.code}: cannot read {what}: {exc.message}") from exc


class HandoffTool(Tool):
    # The text block of a tool whose answer is large: a short summary, the answer itself only once, in
    # structuredContent. None: the SDK's text (the structured answer serialised again).
    summary: Callable[[dict[str, Any]], str] | None = Field(default=None, exclude=True)
    # Held around the body, the result's checks and its summary: what yields to an answer being made
    # (``Queries.answering``) waits for all of it, not for the body alone.
    answering: Callable[[Services], AbstractContextManager[None]] | None = Field(default=None, exclude=True)

    async def run(self, arguments: dict[str, Any], context: Any, convert_result: bool = False) -> Any:
        with tool_errors(self.name):  # the services are made on first use: a refusal to make them is one too
            held = nullcontext() if self.answering is None else self.answering(await services_of(context))
        with held:
            with tool_errors(self.name):
                check_scope(self.name, self.parameters.get("properties", {}), arguments)  # before any tool body
                result = await super().run(arguments, context, convert_result)
            return _summarised(result, self.summary)


def _summarised(result: Any, summary: Callable[[dict[str, Any]], str] | None) -> Any:
    """Send a large answer once in full: structuredContent carries it, the text block only its summary
    (enough for a client that reads text alone to act on), not a second serialisation of it."""
    if summary is None or not isinstance(result, CallToolResult) or result.structured_content is None:
        return result
    return result.model_copy(update={"content": [TextContent(type="text", text=summary(result.structured_content))]})


def untitled(schema: dict[str, Any]) -> dict[str, Any]:
    """Drop titles, and defaults that say no more than "optional" (null, "", [], false)."""
    if isinstance(schema.get("title"), str):
        del schema["title"]
    default = schema.get("default", 0)
    if default is None or default is False or default in ("", []):
        del schema["default"]
    for key in ("properties", "$defs"):
        for sub in (schema.get(key) or {}).values():
            untitled(sub)
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            untitled(schema[key])
    for key in ("anyOf", "allOf", "oneOf"):
        for sub in schema.get(key) or ():
            untitled(sub)
    return schema


def sent_whole(schema: dict[str, Any]) -> dict[str, Any]:
    """An output schema without ``required`` lists and defaults, at every level: every field is sent."""
    schema.pop("required", None)
    schema.pop("default", None)
    for key in ("properties", "$defs"):
        for sub in (schema.get(key) or {}).values():
            sent_whole(sub)
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            sent_whole(schema[key])
    for key in ("anyOf", "allOf", "oneOf"):
        for sub in schema.get(key) or ():
            sent_whole(sub)
    return schema


def tool(
    fn: Callable[..., Any],
    annotations: ToolAnnotations,
    summary: Callable[[dict[str, Any]], str] | None = None,
    answering: Callable[[Services], AbstractContextManager[None]] | None = None,
) -> Tool:
    # Evaluated once here: the SDK reads a function's string annotations (``from __future__ import
    # annotations``) three times over, each an ``eval`` per parameter, while the server starts.
    fn.__annotations__ = get_type_hints(fn, include_extras=True)
    built = HandoffTool.from_function(fn, annotations=annotations)
    assert isinstance(built, HandoffTool)  # from_function builds the class it is called on
    built.summary, built.answering = summary, answering
    untitled(built.parameters)
    if built.output_schema is not None:
        sent_whole(untitled(built.output_schema))
    return built

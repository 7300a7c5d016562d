"""Tools built from annotated functions, with schemas kept small for the model's context window.

pydantic titles every property after its name ("ref" -> "Ref"): pure repetition. Titles and
trivial defaults are dropped from schema objects (never from a ``properties`` mapping, whose
keys are names); optional parameters stay optional because they are not ``required``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcp.server.mcpserver.tools import Tool
from mcp.types import ToolAnnotations


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


def tool(fn: Callable[..., Any], annotations: ToolAnnotations) -> Tool:
    built = Tool.from_function(fn, annotations=annotations)
    untitled(built.parameters)
    if built.output_schema is not None:
        untitled(built.output_schema)
    return built

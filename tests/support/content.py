"""The text a tool call or a resource read answered with, checked to be text."""

from __future__ import annotations

from mcp.types import CallToolResult, ReadResourceResult, TextContent, TextResourceContents


def text_of(result: CallToolResult) -> str:
    """The first content block of a tool result, which every handoff tool answers with as text."""
    block = result.content[0]
    assert isinstance(block, TextContent), block
    return block.text


def resource_text(result: ReadResourceResult) -> str:
    contents = result.contents[0]
    assert isinstance(contents, TextResourceContents), contents
    return contents.text

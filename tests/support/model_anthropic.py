"""A scripted Anthropic Messages endpoint on 127.0.0.1: each main-loop request gets the next turn.

Claude Code streams (``"stream": true``), so a turn is sent as the Messages SSE events:
``message_start``, one ``content_block_start``/``_delta``/``_stop`` triple per block,
``message_delta`` with the stop reason, ``message_stop``. Requests that carry no ``tools`` are the
CLI's side calls (titles, summaries): they get a short text and do not consume the script. Every
request body is recorded, so a test asserts what the CLI sent back (tool results, hook messages).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator, Sequence
from typing import Any

from tests.support.model_server import Block, ModelServer, Text, ToolCall

__all__ = ["AnthropicModel"]


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def _events(blocks: Sequence[Block], model: str) -> Iterator[bytes]:
    message: dict[str, Any] = {
        "id": f"msg_{uuid.uuid4().hex[:24]}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    }
    yield _sse("message_start", {"type": "message_start", "message": message})
    for index, block in enumerate(blocks):
        if isinstance(block, Text):
            start: dict[str, Any] = {"type": "text", "text": ""}
            delta: dict[str, Any] = {"type": "text_delta", "text": block.text}
        else:
            start = {"type": "tool_use", "id": block.call_id, "name": block.name, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block.arguments)}
        yield _sse("content_block_start", {"type": "content_block_start", "index": index, "content_block": start})
        yield _sse("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})
        yield _sse("content_block_stop", {"type": "content_block_stop", "index": index})
    stop = "tool_use" if any(isinstance(b, ToolCall) for b in blocks) else "end_turn"
    end = {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}}
    yield _sse("message_delta", end | {"usage": {"output_tokens": 5}})
    yield _sse("message_stop", {"type": "message_stop"})


class AnthropicModel(ModelServer):
    """``ANTHROPIC_BASE_URL`` for Claude Code: ``/v1/messages`` answered from the script."""

    def is_main(self, path: str, body: dict[str, Any]) -> bool:
        return path.startswith("/v1/messages") and "count_tokens" not in path and bool(body.get("tools"))

    def stream(self, path: str, body: dict[str, Any], blocks: Sequence[Block]) -> Iterator[bytes]:
        if "count_tokens" in path:
            yield json.dumps({"input_tokens": 10}).encode()
            return
        yield from _events(blocks, str(body.get("model", "scripted")))

    def content_type(self, path: str) -> str:
        return "application/json" if "count_tokens" in path else "text/event-stream"

    @staticmethod
    def tool_results(body: dict[str, Any]) -> dict[str, str]:
        """Every ``tool_result`` in a request, by ``tool_use_id``: its text, blocks joined."""
        found: dict[str, str] = {}
        for message in body.get("messages", []):
            content = message.get("content")
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    inner = block.get("content")
                    parts = inner if isinstance(inner, list) else [{"text": inner}]
                    text = "\n".join(str(p.get("text", "")) for p in parts if isinstance(p, dict))
                    found[str(block.get("tool_use_id"))] = text
        return found

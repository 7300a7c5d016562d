"""A scripted OpenAI Responses endpoint on 127.0.0.1, for Codex (``wire_api = "responses"``).

A turn is sent as the Responses SSE events Codex's own tests use: ``response.created``, one
``response.output_item.done`` per block (an assistant ``message``, a ``function_call`` with its
arguments as a JSON string, or a ``custom_tool_call`` for a freeform tool such as ``apply_patch``),
then ``response.completed``. What Codex sends back arrives in the next request's ``input`` as
``function_call_output`` / ``custom_tool_call_output`` items, which ``outputs`` collects.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator, Sequence
from typing import Any

from tests.support.model_server import Block, ModelServer, Text

__all__ = ["FREEFORM", "OpenAIModel"]

FREEFORM = "freeform:"  # a ToolCall name prefixed so is sent as a custom (freeform) tool call, its input raw


def _sse(data: dict[str, Any]) -> bytes:
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode()


def _item(block: Block) -> dict[str, Any]:
    if isinstance(block, Text):
        content = [{"type": "output_text", "text": block.text}]
        return {"type": "message", "role": "assistant", "id": f"msg_{uuid.uuid4().hex[:12]}", "content": content}
    if block.name.startswith(FREEFORM):
        name = block.name.removeprefix(FREEFORM)
        return {"type": "custom_tool_call", "call_id": block.call_id, "name": name, "input": block.arguments["input"]}
    arguments = json.dumps(block.arguments)
    item = {"type": "function_call", "call_id": block.call_id, "name": block.name, "arguments": arguments}
    return item | ({"namespace": block.namespace} if block.namespace else {})


class OpenAIModel(ModelServer):
    """A provider ``base_url`` for Codex: ``POST /v1/responses`` answered from the script."""

    def is_main(self, path: str, body: dict[str, Any]) -> bool:
        return path.rstrip("/").endswith("/responses")

    def stream(self, path: str, body: dict[str, Any], blocks: Sequence[Block]) -> Iterator[bytes]:
        ident = f"resp_{uuid.uuid4().hex[:12]}"
        yield _sse({"type": "response.created", "response": {"id": ident}})
        for block in blocks:
            yield _sse({"type": "response.output_item.done", "item": _item(block)})
        usage = {"input_tokens": 10, "input_tokens_details": None, "output_tokens": 5}
        usage |= {"output_tokens_details": None, "total_tokens": 15}
        yield _sse({"type": "response.completed", "response": {"id": ident, "usage": usage}})

    def get(self, path: str) -> dict[str, Any] | None:
        if path.split("?", maxsplit=1)[0].rstrip("/").endswith("/models"):
            return {"models": [], "data": []}
        return None

    @staticmethod
    def outputs(body: dict[str, Any]) -> dict[str, str]:
        """Every tool output in a request's ``input``, by ``call_id``, as text."""
        found: dict[str, str] = {}
        for item in body.get("input", []):
            if isinstance(item, dict) and item.get("type") in ("function_call_output", "custom_tool_call_output"):
                output = item.get("output")
                if isinstance(output, list):
                    output = "\n".join(str(p.get("text", "")) for p in output if isinstance(p, dict))
                elif isinstance(output, dict):
                    output = str(output.get("content", output))
                found[str(item.get("call_id"))] = str(output)
        return found

    @staticmethod
    def tool_names(body: dict[str, Any]) -> list[str]:
        names = []
        for tool in body.get("tools", []):
            if isinstance(tool, dict):
                names.append(str(tool.get("name") or tool.get("type")))
        return names

"""A message nested deeper than any tool needs is answered, not lost.

The SDK parses each message with pydantic's JSON parser, whose recursion limit turns a request
nested a few hundred levels deep into an error without an id: nobody answers it, and the client
waits forever. So every message is looked at before the SDK parses it (``bounded``: on stdio by a
thread between fd 0 and the SDK, over HTTP by ``server.web.connections``): one nested deeper than
``MAX_NESTING`` keeps its id and method, and its arguments (or params) become a marker, which
``HandoffServer.call_tool`` answers with ``invalid_arguments`` (any other method: the SDK's own
invalid-params error). No tool takes anything nested more than three levels.
"""

from __future__ import annotations

import json
import os
import re
import threading
from contextlib import suppress
from typing import Any, Final

__all__ = ["MAX_NESTING", "NESTED_TOO_DEEP", "bounded", "guard_stdin", "too_deep"]

MAX_NESTING: Final = 64  # levels of [ and { in one message, its envelope included
NESTED_TOO_DEEP: Final = "handoff_nested_too_deep"  # the marker's key in the arguments it replaces
_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]')  # strings are skipped whole: brackets in text don't count


def _cut(data: bytes) -> tuple[bytes, bool]:
    """``data`` with every container below ``MAX_NESTING`` replaced by null, and whether any was."""
    out, depth, last, cut = [], 0, 0, False
    for match in _TOKENS.finditer(data):
        token = match.group()
        if token in (b"[", b"{"):
            depth += 1
            if depth == MAX_NESTING + 1:
                out += [data[last : match.start()], b"null"]
                cut = True
        elif token in (b"]", b"}"):
            if depth == MAX_NESTING + 1:
                last = match.end()
            depth -= 1
    out.append(data[last:])
    return b"".join(out), cut


def bounded(data: bytes) -> bytes:
    """One message as received, or, nested too deep, the same request with its arguments marked."""
    if data.count(b"[") + data.count(b"{") <= MAX_NESTING:
        return data  # cannot nest deeper than it has brackets: the common case costs two counts
    pruned, cut = _cut(data)
    if not cut:
        return data
    try:
        message = json.loads(pruned)
    except ValueError:
        return data  # not JSON at all: the SDK answers that as it always has
    if not isinstance(message, dict):
        return data
    marker = {NESTED_TOO_DEEP: MAX_NESTING}
    params = message.get("params")
    if message.get("method") == "tools/call" and isinstance(params, dict):
        params["arguments"] = marker
    else:
        message["params"] = marker
    return json.dumps(message, ensure_ascii=False).encode() + (b"\n" if data.endswith(b"\n") else b"")


def too_deep(arguments: dict[str, Any]) -> str | None:
    """The refusal for arguments ``bounded`` marked, or None."""
    if NESTED_TOO_DEEP not in arguments:
        return None
    return (
        f"the arguments nest deeper than {MAX_NESTING} levels; "
        "send each parameter as its schema describes (strings, lists of strings)"
    )


def guard_stdin() -> None:
    """Put a pipe at fd 0, fed line by line through ``bounded`` by a thread reading the real stdin.

    The SDK's stdio transport then claims fd 0 as usual (children still read EOF from it).
    """
    source = os.fdopen(os.dup(0), "rb")
    read_end, write_end = os.pipe()
    os.dup2(read_end, 0)
    os.close(read_end)
    sink = os.fdopen(write_end, "wb")

    def pump() -> None:
        with source, sink, suppress(OSError):  # the SDK closed its end: the server is stopping
            for line in source:
                sink.write(bounded(line))
                sink.flush()

    threading.Thread(target=pump, name="stdin-nesting", daemon=True).start()

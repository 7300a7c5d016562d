"""JSON text of plain values (dicts with string keys, lists, strings, booleans, None, integers),
written exactly as ``json.dumps(value, ensure_ascii=False, indent=...)`` writes it.

``handoff-validate`` prints one such answer per check and reads no JSON: importing ``json`` (its
decoder, scanner and encoder) cost each check's process ~1.3 ms. Anything else goes to ``json``
itself. A property test holds the two equal.
"""

from __future__ import annotations

__all__ = ["dumps"]

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: handoff-validate never loads it
if TYPE_CHECKING:
    from typing import Any

# What json escapes in a string when non-ASCII is kept: the quote, the backslash, and control characters.
_ESCAPES = {code: f"\\u{code:04x}" for code in range(0x20)} | {
    ord('"'): '\\"',
    ord("\\"): "\\\\",
    ord("\b"): "\\b",
    ord("\f"): "\\f",
    ord("\n"): "\\n",
    ord("\r"): "\\r",
    ord("\t"): "\\t",
}


def _plain(value: object) -> bool:
    if value is None or isinstance(value, str | bool | int):
        return True
    if isinstance(value, list | tuple):
        return all(_plain(item) for item in value)
    return isinstance(value, dict) and all(isinstance(key, str) and _plain(item) for key, item in value.items())


def _written(value: Any, indent: int | None, depth: int) -> str:
    if isinstance(value, str):
        return '"' + value.translate(_ESCAPES) + '"'
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, int):
        return int.__repr__(value)
    items = (
        [f"{_written(key, None, 0)}: {_written(item, indent, depth + 1)}" for key, item in value.items()]
        if isinstance(value, dict)
        else [_written(item, indent, depth + 1) for item in value]
    )
    ends = "{}" if isinstance(value, dict) else "[]"
    if not items:
        return ends
    if indent is None:
        return ends[0] + ", ".join(items) + ends[1]
    inner, outer = "\n" + " " * (indent * (depth + 1)), "\n" + " " * (indent * depth)
    return ends[0] + inner + ("," + inner).join(items) + outer + ends[1]


def dumps(value: object, indent: int | None = None) -> str:
    """``json.dumps(value, ensure_ascii=False, indent=indent)``."""
    if not _plain(value):
        import json

        return json.dumps(value, ensure_ascii=False, indent=indent)
    return _written(value, indent, 0)

"""The lines the TASK renderer writes, read without ``re`` or ``json``: ``key: "text"``, ``key: 123``
and ``key: [flow]`` in printable ASCII with no backslash (so no escapes), a flow being a list of
strings or of ``{"k": "v"}`` objects. Anything else is not read here (``None``): the caller then
reads the TASK the contract's full way, so this shortcut can make a read faster, never different.
The hook and the sandbox load it on every start; those two modules alone cost them more than the
rest of a decision.
"""

from __future__ import annotations

__all__ = ["read_lines", "simple_hex", "simple_name"]

_PRINTABLE = frozenset(chr(code) for code in range(0x20, 0x7F)) - {'"', "\\"}  # what a rendered string holds
_KEY = frozenset("abcdefghijklmnopqrstuvwxyz_")
_NAME_FIRST = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_NAME = _NAME_FIRST | frozenset("._-")
_HEX = frozenset("0123456789abcdef")
_MAX_NUMBER = 9  # digits of a number the renderer writes (at most)


def simple_name(part: str) -> bool:
    """``[A-Za-z0-9][A-Za-z0-9._-]{0,199}``: a ref's part as the hook reads it."""
    return 0 < len(part) <= 200 and part[0] in _NAME_FIRST and all(char in _NAME for char in part)  # noqa: PLR2004


def simple_hex(text: str) -> bool:
    """64 lowercase hex digits: a sha256 as printed."""
    return len(text) == 64 and all(char in _HEX for char in text)  # noqa: PLR2004


def _string(text: str, at: int) -> tuple[str, int] | None:
    end = text.find('"', at + 1)
    if text[at : at + 1] != '"' or end < 0:
        return None
    return text[at + 1 : end], end + 1


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at] == " ":
        at += 1
    return at


def _item(text: str, at: int) -> tuple[object, int] | None:
    """A string, or an object of strings, at ``at``."""
    if text[at : at + 1] != "{":
        return _string(text, at)
    found: dict[str, str] = {}
    at = _skip(text, at + 1)
    while text[at : at + 1] != "}":
        key = _string(text, at)
        if key is None or text[_skip(text, key[1]) : _skip(text, key[1]) + 1] != ":":
            return None
        value = _string(text, _skip(text, _skip(text, key[1]) + 1))
        if value is None:
            return None
        found[key[0]], at = value[0], _skip(text, value[1])
        if text[at : at + 1] == ",":
            at = _skip(text, at + 1)
        elif text[at : at + 1] != "}":
            return None
    return found, at + 1


def _flow(text: str) -> list[object] | None:
    """A ``[...]`` flow of items, the whole of ``text``; None for anything else."""
    items: list[object] = []
    at = _skip(text, 1)
    while at < len(text) and text[at] != "]":
        item = _item(text, at)
        if item is None:
            return None
        items.append(item[0])
        at = _skip(text, item[1])
        if text[at : at + 1] == ",":
            at = _skip(text, at + 1)
            if text[at : at + 1] == "]":  # a trailing comma: not JSON
                return None
        elif text[at : at + 1] != "]":
            return None
    return items if at == len(text) - 1 else None


def _value(text: str) -> object | None:
    if text.startswith('"') and text.endswith('"') and len(text) > 1 and all(c in _PRINTABLE for c in text[1:-1]):
        return text[1:-1]
    if text.isascii() and text.isdigit() and len(text) <= _MAX_NUMBER and (text == "0" or text[0] != "0"):
        return int(text)
    if text.startswith("[") and text.endswith("]") and all(c in _PRINTABLE or c == '"' for c in text):
        return _flow(text)
    return None


def read_lines(block: str) -> dict[str, object] | None:
    """Each ``key: value`` line of ``block``, every key once; None when any line is not as rendered."""
    fields: dict[str, object] = {}
    for line in block.split("\n"):
        key, separator, rest = line.partition(": ")
        if not separator or not key or not all(char in _KEY for char in key) or key in fields:
            return None
        if (value := _value(rest)) is None:
            return None
        fields[key] = value
    return fields

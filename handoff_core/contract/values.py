"""What counts as a real value: the seed's ``real()`` test, shared by TASK, REPORT and locator checks."""

from __future__ import annotations

import re

from handoff_core.contract.pattern import compile_on_use
from handoff_core.errors import InvalidContent

__all__ = [
    "JS_ANY",
    "JS_SPACE",
    "PLACEHOLDER_SEGMENT",
    "header_pair",
    "is_real",
    "js_trim",
    "relative_parts",
    "visible",
]

# The seed is JavaScript: its ``\s`` and ``trim()`` know U+FEFF but not U+0085 or U+001C-U+001F,
# unlike Python's ``str.strip``; and its ``/i`` (no ``u`` flag) never folds a non-ASCII letter
# into an ASCII one (Kelvin sign, long s, dotless i), unlike ``re.IGNORECASE``: hence ``re.ASCII``.
JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
JS_ANY = "[^\\n\\r\\u2028\\u2029]"  # JavaScript's ``.``: not a line terminator
# The same characters one by one (its one range spelled out), for ``str.strip``: no pattern to compile.
_JS_SPACE_CHARS = JS_SPACE.replace("\u2000-\u200a", "".join(map(chr, range(0x2000, 0x200B))))
_PLACEHOLDER_WORD = compile_on_use(r"^(?:unknown|unassigned|pending|todo|tbd|\.\.\.)\Z", re.IGNORECASE | re.ASCII)
_PLACEHOLDER_MARK = compile_on_use(r"[<>\x00-\x1f]|\{[^}]*\}")
PLACEHOLDER_SEGMENT = compile_on_use(r"(?:^|[\\/])(?:\.\.\.|unknown|todo|tbd)(?:[\\/]|\Z)", re.IGNORECASE | re.ASCII)


def js_trim(text: str) -> str:
    """JavaScript's ``String.prototype.trim``."""
    return text.strip(_JS_SPACE_CHARS)


_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-")
_LINE_ENDS = ("\n", "\r", "\u2028", "\u2029")  # what JavaScript's ``.`` does not match


def header_pair(line: str) -> tuple[str, str] | None:
    """``(key, value)`` as the seed reads a ``Key: value`` line with
    ``/^([A-Za-z][A-Za-z0-9-]*):\\s*(.*?)\\s*$/``, or None when it does not match. String tests, not
    the pattern: its JavaScript space classes cost a check's process ~0.5 ms to compile (a test
    holds the two equal)."""
    key, colon, rest = line.partition(":")
    if not colon or not key or not key[0].isalpha() or not _NAME_CHARS.issuperset(key):
        return None
    value = js_trim(rest)
    return None if any(end in value for end in _LINE_ENDS) else (key, value)


def visible(text: str) -> str:
    """One line with every character that is not printable spelled out (``\\u200d``), so that text
    from the tree or an executor cannot hide words, reorder them or drive a terminal."""
    line = " ".join(text.split())
    return "".join(char if char.isprintable() else f"\\u{ord(char):04x}" for char in line)


def is_real(value: object) -> bool:
    """A non-empty string without surrounding space that is not a placeholder."""
    return (
        isinstance(value, str)
        and value != ""
        and js_trim(value) == value
        and _PLACEHOLDER_WORD.match(value) is None
        and _PLACEHOLDER_MARK.search(value) is None
    )


def relative_parts(path: str) -> tuple[str, ...]:
    """The components of a project-relative path; anything that could leave the project is refused."""
    parts = tuple(path.split("/"))
    if path.startswith("/") or any(part in ("", ".", "..") for part in parts):
        raise InvalidContent(f"{path!r} is not a project-relative path (no leading '/', no '.', '..' or empty segment)")
    return parts

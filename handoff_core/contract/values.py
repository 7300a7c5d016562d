"""What counts as a real value: the seed's ``real()`` test, shared by TASK, REPORT and locator checks."""

from __future__ import annotations

import re

__all__ = ["PLACEHOLDER_SEGMENT", "is_real", "visible"]

_PLACEHOLDER_WORD = re.compile(r"^(?:unknown|unassigned|pending|todo|tbd|\.\.\.)\Z", re.IGNORECASE)
_PLACEHOLDER_MARK = re.compile(r"[<>\x00-\x1f]|\{[^}]*\}")
PLACEHOLDER_SEGMENT = re.compile(r"(?:^|[\\/])(?:\.\.\.|unknown|todo|tbd)(?:[\\/]|$)", re.IGNORECASE)


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
        and value.strip() == value
        and _PLACEHOLDER_WORD.match(value) is None
        and _PLACEHOLDER_MARK.search(value) is None
    )

"""What counts as a real value: the seed's ``real()`` test, shared by TASK, REPORT and locator checks."""

from __future__ import annotations

import re

__all__ = ["PLACEHOLDER_SEGMENT", "is_real"]

_PLACEHOLDER_WORD = re.compile(r"^(?:unknown|unassigned|pending|todo|tbd|\.\.\.)\Z", re.IGNORECASE)
_PLACEHOLDER_MARK = re.compile(r"[<>\x00-\x1f]|\{[^}]*\}")
PLACEHOLDER_SEGMENT = re.compile(r"(?:^|[\\/])(?:\.\.\.|unknown|todo|tbd)(?:[\\/]|$)", re.IGNORECASE)


def is_real(value: object) -> bool:
    """A non-empty string without surrounding space that is not a placeholder."""
    return (
        isinstance(value, str)
        and value != ""
        and value.strip() == value
        and _PLACEHOLDER_WORD.match(value) is None
        and _PLACEHOLDER_MARK.search(value) is None
    )

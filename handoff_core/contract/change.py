"""Change facts: where a change lives (active or archived) and its README ``Outcome:`` line."""

from __future__ import annotations

import re
from dataclasses import dataclass

from handoff_core.contract.markdown import split_lines

OUTCOMES = ("active", "completed", "cancelled")
ACTIVE = ("specdev", "changes")
ARCHIVE = ("specdev", "archive")
MONTH_RE = re.compile(r"^\d{4}-\d{2}$")
_OUTCOME = re.compile(r"^Outcome:\s*(.*?)\s*$")


@dataclass(frozen=True)
class ChangeFacts:
    change: str
    location: str  # "active" or "archived"
    parts: tuple[str, ...]  # directory components below the state root
    outcome: str | None  # None when the README has no single valid Outcome line


def read_outcome(readme: str) -> str | None:
    """The one ``Outcome:`` value, or None when it is missing, repeated or unknown."""
    values = [m.group(1) for line in split_lines(readme) if (m := _OUTCOME.match(line))]
    return values[0] if len(values) == 1 and values[0] in OUTCOMES else None

"""The seed TASK's fenced structure: its headings and body lines."""

from __future__ import annotations

import re

from handoff_core.contract.markdown import split_lines


def headings(lines: list[str]) -> list[str]:
    return [line for line in lines if re.match(r"^#{1,2} ", line)]


def seed_body_lines(text: str) -> list[str]:
    """Lines outside fences as the seed reads them: a fence opens and closes at the first column only."""
    out: list[str] = []
    fence: str | None = None
    for line in split_lines(text):
        match = _SEED_FENCE.match(line)
        if fence is not None:
            if (
                match
                and match.group(1)[0] == fence[0]
                and len(match.group(1)) >= len(fence)
                and not match.group(2).strip()
            ):
                fence = None
        elif match and not (match.group(1)[0] == "`" and "`" in match.group(2)):
            fence = match.group(1)
        else:
            out.append(line)
    return out


_SEED_FENCE = re.compile(r"^(`{3,}|~{3,})(.*)$")

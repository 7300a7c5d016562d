"""Single-writer ownership (SPEC §8), decided from the handoff files alone.

An outstanding implementation task (TASK present, no REPORT, no RELEASE) claims its workspace
and writable globs, with no TTL: a quiet pane never proves a writer stopped. Whether two write
sets overlap is decided exactly: each glob is translated to a regular language over paths and
the languages are intersected (``interegular``), so ``src/**/*.py`` and ``src/a/*`` overlap on
``src/a/x.py`` while ``src/a/**`` and ``src/b/**`` never do.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from handoff_core.contract.ids import Ref
from handoff_core.contract.task import Scope
from handoff_core.errors import InvalidContent, OwnershipConflict
from handoff_core.layout import Kind, Workspace

__all__ = ["Claim", "check_dispatch", "glob_regex", "overlap"]

_SEGMENT = "[^/]+"
_CLASS = re.compile(r"\[(!|\^)?([A-Za-z0-9._-]+)\]")
_META = set(".^$*+?{}[]\\|()")


@dataclass(frozen=True)
class Claim:
    ref: Ref
    workspace: Workspace
    writable: tuple[str, ...]
    shared: tuple[tuple[str, str], ...]  # (path, owner)
    age_seconds: float

    def describe(self) -> str:
        return f"{self.ref} ({self.workspace}, {', '.join(self.writable)}, age {int(self.age_seconds)}s)"


def _segment_regex(segment: str, glob: str) -> str:
    if set(segment) == {"*"}:
        return _SEGMENT  # a segment is never empty, so a lone * needs at least one character
    out, index = [], 0
    while index < len(segment):
        char = segment[index]
        if char == "[":
            match = _CLASS.match(segment, index)
            if match is None:
                raise InvalidContent(f"glob {glob!r}: use simple classes like [abc], [a-z] or [!x]")
            negate = "^/" if match.group(1) else ""
            out.append(f"[{negate}{match.group(2)}]")
            index = match.end()
            continue
        out.append("[^/]*" if char == "*" else "[^/]" if char == "?" else f"\\{char}" if char in _META else char)
        index += 1
    return "".join(out)


@lru_cache(maxsize=4096)
def glob_regex(glob: str) -> str:
    """The language of a project-relative glob as a regex (``*``, ``?``, ``[…]`` in a segment; ``**`` any depth)."""
    segments = glob.split("/")
    if any(s in ("", ".", "..") for s in segments):
        raise InvalidContent(f"glob {glob!r} has an empty, '.' or '..' segment; write it like src/a1/**")
    out, joined = "", True  # joined: the next segment needs no separator
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment != "**":
            out += ("" if joined else "/") + _segment_regex(segment, glob)
            joined = False
        elif last:
            # A trailing ** stands for one or more segments; elsewhere for zero or more.
            out += f"{_SEGMENT}(/{_SEGMENT})*" if joined else f"(/{_SEGMENT})+"
        else:
            out += f"({_SEGMENT}/)*" if joined else f"/({_SEGMENT}/)*"
            joined = True
    return out


_NAME = r"(?:[^/.][^/]*|\.[^/.][^/]*|\.\.[^/]+)"  # any segment but "." and ".."
_REAL_PATH = rf"{_NAME}(?:/{_NAME})*"


@lru_cache(maxsize=4096)
def _overlap(a: str, b: str) -> str | None:
    import interegular  # only when two write sets meet: keeps server start-up light
    from interegular.fsm import Alphabet
    from interegular.patterns import REFlags

    patterns = [interegular.parse_pattern(regex) for regex in (glob_regex(a), glob_regex(b), _REAL_PATH)]
    alphabet, _ = Alphabet.union(*(pattern.get_alphabet(REFlags(0)) for pattern in patterns))
    first, second, real = (pattern.to_fsm(alphabet) for pattern in patterns)
    both = first & second & real
    if both.empty():
        return None
    # A symbol outside the alphabet stands for "any other character": pick one neither glob names.
    other = next(ch for ch in "zqjkw0123456789" if ch not in a + b)
    return "".join(ch if isinstance(ch, str) else other for ch in next(iter(both.strings())))


def overlap(a: str, b: str) -> str | None:
    """A path both globs match, or None when no path can."""
    return _overlap(*sorted((a, b)))


def _first_overlap(mine: Iterable[str], theirs: Iterable[str]) -> tuple[str, str, str] | None:
    for a in mine:
        for b in theirs:
            if (example := overlap(a, b)) is not None:
                return a, b, example
    return None


def _refuse(reason: str, holders: list[Claim]) -> OwnershipConflict:
    held = "; ".join(claim.describe() for claim in holders)
    return OwnershipConflict(
        f"{reason}. Held by: {held}. Wait for its REPORT (wait_for_reports), or, if its writer has stopped, "
        "release it with release_writer and evidence; then dispatch again"
    )


def check_dispatch(kind: Kind, scope: Scope, claims: list[Claim], cap: int) -> None:
    """Refuse a dispatch that would break single-writer ownership; read-only kinds never conflict."""
    if kind != "implementation":
        return
    if scope.workspace == "current" and (current := [c for c in claims if c.workspace == "current"]):
        raise _refuse("the current workspace already has an outstanding implementation writer", current)
    for claim in claims:
        if (hit := _first_overlap(scope.writable, claim.writable)) is not None:
            raise _refuse(f"writable {hit[0]!r} overlaps {hit[1]!r} (both cover {hit[2]!r})", [claim])
        for path, owner in ((s.path, s.owner) for s in scope.shared):
            clash = [(p, o) for p, o in claim.shared if o != owner and overlap(path, p) is not None]
            if clash:
                raise _refuse(f"shared path {path!r} is owned by {clash[0][1]!r}, not {owner!r}", [claim])
    if len(claims) >= cap:
        raise _refuse(f"{len(claims)} implementation writers are outstanding (the cap is {cap})", claims)

"""Project-relative globs: their grammar and limits, and each one's language as a regex.

A glob is ``*``, ``?`` and ``[…]`` within a segment and ``**`` for any depth; it matches file
paths whose segments are never empty, ``.`` or ``..``. A glob too long, or too many of them, is
refused with what to change.
"""

from __future__ import annotations

from functools import lru_cache

from handoff_core.contract.pattern import compile_on_use
from handoff_core.errors import InvalidContent

__all__ = [
    "ANY",
    "MAX_GLOBS",
    "MAX_GLOB_LENGTH",
    "Pred",
    "check_glob_count",
    "check_globs",
    "glob_regex",
    "glob_tokens",
]

MAX_GLOB_LENGTH = 200
MAX_GLOBS = 64  # per list (writable, read_only, shared, artifacts) of one task
_CLASS = compile_on_use(r"\[(!|\^)?([A-Za-z0-9._-]+)\]")
_META = set(".^$*+?{}[]\\|()")
_SEGMENT = "[^/]+"

# A character test: (chars, negated) means "not '/', and in chars unless negated"; None means '/'.
Pred = tuple[frozenset[str], bool] | None
ANY: Pred = (frozenset(), True)


def check_glob_count(globs: tuple[str, ...], where: str) -> None:
    if len(globs) > MAX_GLOBS:
        raise InvalidContent(f"{where} has {len(globs)} globs; at most {MAX_GLOBS}: name directories with dir/**")
    for glob in globs:
        if len(glob) > MAX_GLOB_LENGTH:
            raise InvalidContent(f"{where} glob {glob[:40]!r}… is longer than {MAX_GLOB_LENGTH} characters")


def check_globs(globs: tuple[str, ...], where: str) -> None:
    """Globs that ownership will intersect: bounded in number and length, and in the grammar it decides."""
    check_glob_count(globs, where)
    for glob in globs:
        glob_tokens(glob)


def _class_chars(body: str, glob: str) -> frozenset[str]:
    chars: set[str] = set()
    index = 0
    while index < len(body):
        if index + 2 < len(body) and body[index + 1] == "-":
            low, high = body[index], body[index + 2]
            if low > high:
                raise InvalidContent(f"glob {glob!r}: the range {low}-{high} is reversed")
            chars |= {chr(code) for code in range(ord(low), ord(high) + 1)}
            index += 3
        else:
            chars.add(body[index])
            index += 1
    return frozenset(chars)


@lru_cache(maxsize=4096)
def glob_tokens(glob: str) -> tuple[tuple[tuple[Pred, bool], ...] | None, ...]:
    """Per segment: None for ``**``, else ``(predicate, repeats)`` per character position."""
    segments = glob.split("/")
    if any(s in ("", ".", "..") for s in segments):
        raise InvalidContent(f"glob {glob!r} has an empty, '.' or '..' segment; write it like src/a1/**")
    out: list[tuple[tuple[Pred, bool], ...] | None] = []
    for segment in segments:
        if segment == "**":
            out.append(None)
            continue
        if set(segment) == {"*"}:  # a segment is never empty, so a lone * needs a character
            out.append(((ANY, False), (ANY, True)))
            continue
        tokens: list[tuple[Pred, bool]] = []
        index = 0
        while index < len(segment):
            char = segment[index]
            if char == "[":
                match = _CLASS.match(segment, index)
                if match is None:
                    raise InvalidContent(f"glob {glob!r}: use simple classes like [abc], [a-z] or [!x]")
                tokens.append(((_class_chars(match.group(2), glob), bool(match.group(1))), False))
                index = match.end()
                continue
            tokens.append(
                (ANY, True) if char == "*" else (ANY, False) if char == "?" else ((frozenset(char), False), False)
            )
            index += 1
        out.append(tuple(tokens))
    return tuple(out)


def _segment_regex(tokens: tuple[tuple[Pred, bool], ...]) -> str:
    out = []
    for pred, repeats in tokens:
        if pred == ANY:
            out.append("[^/]*" if repeats else "[^/]")
        elif pred is not None and len(pred[0]) == 1 and not pred[1]:
            char = next(iter(pred[0]))
            out.append(f"\\{char}" if char in _META else char)
        elif pred is not None:
            body = "".join(f"\\{c}" if c in "\\]^-" else c for c in sorted(pred[0]))
            out.append(f"[{'^/' if pred[1] else ''}{body}]")
    return "".join(out)


@lru_cache(maxsize=4096)
def glob_regex(glob: str) -> str:
    """The glob's language as a Python regex (for ``re.fullmatch``), the same language as its automaton."""
    out, joined = "", True
    segments = glob_tokens(glob)
    for index, tokens in enumerate(segments):
        last = index == len(segments) - 1
        if tokens is not None:
            out += ("" if joined else "/") + _segment_regex(tokens)
            joined = False
        elif last:
            out += f"{_SEGMENT}(/{_SEGMENT})*" if joined else f"(/{_SEGMENT})+"
        else:
            out += f"({_SEGMENT}/)*" if joined else f"/({_SEGMENT}/)*"
            joined = True
    return out

"""Markdown structure as the seed validator sees it: lines outside fenced code, ``## `` sections."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache, wraps

from handoff_core.contract.pattern import compile_on_use
from handoff_core.contract.values import JS_SPACE, js_trim
from handoff_core.errors import InvalidContent
from handoff_core.layout import MAX_FILE_BYTES

__all__ = [
    "CACHED_TEXT_LIMIT",
    "Line",
    "body_lines",
    "check_fragment",
    "header_lines",
    "normalise_newlines",
    "required_sections",
    "section_problems",
    "sections",
    "small_text_cache",
    "split_lines",
]

RESERVED_INFO = "handoff-scope"
MAX_FENCE_INDENT = 3  # spaces before a fence line: CommonMark's bound, past it the line is code text
_FENCE_OPEN = re.compile(rf"^ {{0,{MAX_FENCE_INDENT}}}(`{{3,}}|~{{3,}})(.*)$")
_SECTION_END = re.compile(r"^#{1,2} ")
_ANY_HEADING = re.compile(f"^#+[{JS_SPACE}]")
# Any line that could be read as opening the scope block, at any depth of nesting.
_RESERVED_LINE = compile_on_use(rf"^\s*(?:`{{3,}}|~{{3,}})\s*{RESERVED_INFO}", re.IGNORECASE)


Line = tuple[int, str]  # (line number from 0, text): plain tuples, as thousands are made per status call


def split_lines(text: str) -> list[str]:
    lines = text.split("\n")
    return [line.removesuffix("\r") for line in lines] if "\r" in text else lines


def _closes(line: str, fence: str) -> bool:
    if fence[0] not in line:
        return False
    stripped = line.lstrip(" ")
    if len(line) - len(stripped) > MAX_FENCE_INDENT:
        return False
    run = len(stripped) - len(stripped.lstrip(fence[0]))
    return run >= len(fence) and js_trim(stripped[run:]) == ""


def _opens(line: str) -> str | None:
    if line.lstrip(" ")[:1] not in ("`", "~"):
        return None
    match = _FENCE_OPEN.match(line)
    if match is None or (match.group(1)[0] == "`" and "`" in match.group(2)):
        return None
    return match.group(1)


TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: handoff-validate never loads it
if TYPE_CHECKING:
    from typing import TypeVar

    T = TypeVar("T")
CACHED_TEXT_LIMIT = 256 * 1024  # texts above this are recomputed, never kept: 64 entries stay under 16 MiB


def small_text_cache(fn: Callable[[str], T]) -> Callable[[str], T]:
    """An LRU cache of 64 entries that only keeps texts up to ``CACHED_TEXT_LIMIT`` characters.

    A document is read several times in a row (header, sections, checks); a cache keyed on whole
    texts must not hold large ones, which would keep megabytes alive per entry.
    """
    cached = lru_cache(maxsize=64)(fn)

    @wraps(fn)
    def wrapper(text: str) -> T:
        return cached(text) if len(text) <= CACHED_TEXT_LIMIT else fn(text)

    wrapper.cache_info = cached.cache_info  # type: ignore[attr-defined]
    return wrapper


@small_text_cache
def body_lines(text: str) -> tuple[Line, ...]:
    """Every line outside fenced code, numbered from 0; an unclosed fence runs to the end."""
    if "```" not in text and "~~~" not in text:  # no line can open a fence: every line is body
        return tuple(enumerate(split_lines(text)))
    return scan_fences(text)


def scan_fences(text: str) -> tuple[Line, ...]:
    """``body_lines`` the long way: line by line, opening and closing fences."""
    lines: list[Line] = []
    fence: str | None = None
    for number, line in enumerate(split_lines(text)):
        if fence is not None:
            if _closes(line, fence):
                fence = None
        elif (opened := _opens(line)) is not None:
            fence = opened
        else:
            lines.append((number, line))
    return tuple(lines)


def section_problems(text: str, names: Sequence[str]) -> list[str]:
    """The seed's ``headings()`` check, collecting a problem per section instead of stopping."""
    lines = body_lines(text)
    heads = [index for index, (_, line) in enumerate(lines) if line.startswith("## ")]
    problems: list[str] = []
    for name in names:
        found = [index for index in heads if lines[index][1] == f"## {name}"]
        if len(found) != 1:
            problems.append(f"expected one {name} section")
        elif not _has_content(lines[found[0] + 1 :]):
            problems.append(f"empty {name} section")
    return problems


def _has_content(lines: tuple[Line, ...]) -> bool:
    """A non-blank, non-heading line before the next ``#``/``##`` heading."""
    for _, line in lines:
        if _SECTION_END.match(line):
            return False
        if js_trim(line) and not _ANY_HEADING.match(line):
            return True
    return False


def sections(text: str) -> dict[str, str]:
    """Raw text of each ``## `` section (fenced code included), keyed by heading; first one wins."""
    all_lines = split_lines(text)
    heads = [ln for ln in body_lines(text) if _SECTION_END.match(ln[1])]
    found: dict[str, str] = {}
    for index, head in enumerate(heads):
        number, heading = head
        if not heading.startswith("## "):
            continue
        end = heads[index + 1][0] if index + 1 < len(heads) else len(all_lines)
        found.setdefault(heading[3:], "\n".join(all_lines[number + 1 : end]).strip("\n"))
    return found


def required_sections(text: str, names: Sequence[str], what: str) -> dict[str, str]:
    """``sections(text)``, refused unless every one of ``names`` is there."""
    found = sections(text)
    missing = [name for name in names if name not in found]
    if missing:
        raise InvalidContent(f"{what} is missing section(s) {missing}")
    return found


def header_lines(text: str) -> list[Line]:
    """Body lines before the first ``## `` heading (where REPORT header fields live)."""
    lines = body_lines(text)
    end = next((number for number, line in lines if line.startswith("## ")), None)
    return [ln for ln in lines if end is None or ln[0] < end]


def normalise_newlines(text: str) -> str:
    """CRLF and lone CR become LF; blank lines around the text go."""
    return text.replace("\r\n", "\n").replace("\r", "\n").strip("\n")


_INDENTED_FENCE = compile_on_use(r"^(?: {4,}|[ ]{0,3}\t[ \t]*)(`{3,}|~{3,})")
# The seed's reader takes a fence only at the first column, CommonMark up to three spaces in: a
# fence one to three spaces in opens (or closes) for one and not the other, so the sections around
# it differ. Inside a fence such a line is harmless unless CommonMark would take it as the close.
_SHIFTED_FENCE = compile_on_use(r"^ {1,3}(`{3,}|~{3,})")
_PLACEHOLDER_SECTION = compile_on_use(
    r"^(?:unknown|unassigned|pending|todo|tbd|\.\.\.|…|<[^<>]*>|\{[^{}]*\})\Z", re.I | re.A
)


def _ambiguous(line: str, fence: str | None) -> str | None:
    """Why the seed and CommonMark would read this line differently, or None."""
    if _INDENTED_FENCE.match(line):
        return "an indented or tab-led code fence"
    if _SHIFTED_FENCE.match(line) and (fence is None or _closes(line, fence)):
        return "an indented code fence, which the seed reads as plain text (start it at the first column)"
    stripped = line.lstrip(" ")
    if fence is None and len(line) - len(stripped) <= MAX_FENCE_INDENT and stripped.startswith("```"):
        run = len(stripped) - len(stripped.lstrip("`"))
        if "`" in stripped[run:]:
            return "a backtick fence whose info string holds a backtick"
    if fence is not None and stripped[:1] == fence[0] and len(line) - len(stripped) <= MAX_FENCE_INDENT:
        run = len(stripped) - len(stripped.lstrip(fence[0]))
        if run >= len(fence) and js_trim(stripped[run:]):
            return "a closing fence followed by text"
    return None


def check_fragment(text: str, field: str) -> str:
    """Normalise a caller's Markdown and refuse what would break the document around it, or read
    differently in the seed's validator and in a Markdown renderer."""
    if len(text) > MAX_FILE_BYTES:  # refused before any copy is made: the whole file has this limit
        raise InvalidContent(f"{field} is {len(text)} characters, over the {MAX_FILE_BYTES}-byte file limit")
    text = normalise_newlines(text)
    if not js_trim(text):
        raise InvalidContent(f"{field} is empty: write the facts this section needs")
    if "\x00" in text:
        raise InvalidContent(f"{field} contains a NUL character: remove it")
    if _PLACEHOLDER_SECTION.match(js_trim(text)):
        raise InvalidContent(f"{field} is a placeholder ({js_trim(text)!r}): write the real content")
    fence: str | None = None
    for number, line in enumerate(split_lines(text), start=1):
        _check_line(line, number, field, fence)
        if fence is not None:
            fence = None if _closes(line, fence) else fence
        elif (opened := _opens(line)) is not None:
            fence = opened
    if fence is not None:
        raise InvalidContent(f"{field} opens a code fence {fence!r} that is never closed: close it")
    return text


def _check_line(line: str, number: int, field: str, fence: str | None) -> None:
    if _RESERVED_LINE.match(line):  # even inside another fence: the claim reader must see one block only
        raise InvalidContent(
            f"{field} line {number} opens a '{RESERVED_INFO}' code block, which is reserved for the scope "
            "the server renders; give workspace and globs in their own fields"
        )
    if (reason := _ambiguous(line, fence)) is not None:
        raise InvalidContent(f"{field} line {number} is {reason}, which Markdown readers disagree on: rewrite it")
    if fence is None and _opens(line) is None and _SECTION_END.match(line):
        raise InvalidContent(
            f"{field} has a top-level heading line {line!r}: headings '# ' and '## ' belong to the "
            "document; use '### ' or plain text inside a section"
        )

"""The paths a Codex ``apply_patch`` names, read with Codex's own grammar (codex-rs ``apply-patch``
``parser.rs``, lenient mode), so that the guard judges exactly the files Codex would touch.

Codex trims the whole patch and each hunk header with Rust's ``str::trim`` (Unicode White_Space),
splits lines on ``\\n`` only (a ``\\r`` before it dropped), reads ``*** Move to:`` untrimmed on the
line right after its ``*** Update File:``, and refuses the whole patch on any malformed hunk. A
Python ``splitlines()`` or ``startswith`` over untrimmed lines reads another file list: an indented
header, or a path holding a character Python splits lines on, would name a file never judged.
Stdlib only: the hook process imports this.
"""

from __future__ import annotations

__all__ = ["PatchRefused", "codex_path", "patch_paths", "rust_trim"]

BEGIN, END = "*** Begin Patch", "*** End Patch"
ADD, DELETE, UPDATE, MOVE = "*** Add File: ", "*** Delete File: ", "*** Update File: ", "*** Move to: "
EOF_MARKER = "*** End of File"
# Rust's char::is_whitespace: the Unicode White_Space property (not U+001C..U+001F, unlike str.strip).
_WHITE = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
_WHITE += "\u2028\u2029\u202f\u205f\u3000"
_HEREDOCS = ("<<EOF", "<<'EOF'", '<<"EOF"')
_HEREDOC_LINES = 4  # the two heredoc lines around a patch of at least two


def codex_path(header_rest: str) -> str:
    """A header's path as Codex writes it: the ``codex`` binary drops every tab and carriage return in
    it (seen by the differential test against @openai/codex; no other character is dropped)."""
    return header_rest.replace("\t", "").replace("\r", "")


class PatchRefused(ValueError):
    """Codex would refuse this patch whole (and apply nothing of it)."""


def rust_trim(text: str) -> str:
    return text.strip(_WHITE)


def _lines(text: str) -> list[str]:
    """Rust's ``str::lines``: split on ``\\n``, one trailing ``\\r`` dropped, no final empty line."""
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def _body(lines: list[str]) -> list[str]:
    """The hunk lines between the markers (lenient: a heredoc around the patch is unwrapped)."""

    def strict(inner: list[str]) -> list[str] | None:
        if len(inner) > 1 and rust_trim(inner[0]) == BEGIN and rust_trim(inner[-1]) == END:
            return inner[1:-1]
        return None

    if (found := strict(lines)) is not None:
        return found
    wrapped = len(lines) >= _HEREDOC_LINES and lines[0] in _HEREDOCS and lines[-1].endswith("EOF")
    if wrapped and (found := strict(lines[1:-1])) is not None:
        return found
    raise PatchRefused("the patch does not open with '*** Begin Patch' and close with '*** End Patch'")


def _chunk(lines: list[str], allow_missing_context: bool) -> int:
    """How many lines one update chunk takes (``parse_update_file_chunk``)."""
    start = 1 if lines[0] == "@@" or lines[0].startswith("@@ ") else 0
    if start == 0 and not allow_missing_context:
        raise PatchRefused(f"an update hunk line {lines[0][:60]!r} does not start with @@")
    if start >= len(lines):
        raise PatchRefused("an update hunk has no lines")
    parsed = 0
    for line in lines[start:]:
        if line == EOF_MARKER:
            if parsed == 0:
                raise PatchRefused("an update hunk has no lines")
            parsed += 1
            break
        if line and line[0] not in " +-":
            if parsed == 0:
                raise PatchRefused(f"an update hunk line {line[:60]!r} is not a context, + or - line")
            break
        parsed += 1
    return parsed + start


def _update(lines: list[str], path: str) -> tuple[list[str], int]:
    paths, used = [path], 1
    rest = lines[1:]
    if rest and rest[0].startswith(MOVE):
        paths.append(rest[0][len(MOVE) :])
        rest, used = rest[1:], used + 1
    chunks = 0
    while rest:
        if not rust_trim(rest[0]):
            rest, used = rest[1:], used + 1
            continue
        if rest[0].startswith("*"):
            break
        taken = _chunk(rest, chunks == 0)
        chunks += 1
        rest, used = rest[taken:], used + taken
    if chunks == 0:
        raise PatchRefused(f"the update hunk for {path[:80]!r} is empty")
    return paths, used


def _hunk(lines: list[str]) -> tuple[list[str], int]:
    """The paths one hunk names and how many lines it takes (``parse_one_hunk``)."""
    first = rust_trim(lines[0])
    if first.startswith(ADD):
        used = 1
        while used < len(lines) and lines[used].startswith("+"):
            used += 1
        return [first[len(ADD) :]], used
    if first.startswith(DELETE):
        return [first[len(DELETE) :]], 1
    if first.startswith(UPDATE):
        return _update(lines, first[len(UPDATE) :])
    raise PatchRefused(f"{first[:80]!r} is not a valid hunk header")


def patch_paths(patch: str) -> list[str]:
    """Every path the patch names (both sides of a move), as the header gives it; ``PatchRefused``
    when Codex would refuse the patch. ``codex_path`` is the file Codex then writes."""
    rest = _body(_lines(rust_trim(patch)))
    paths: list[str] = []
    while rest:
        named, used = _hunk(rest)
        paths += named
        rest = rest[used:]
    return paths

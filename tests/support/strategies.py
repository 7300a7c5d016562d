"""Hypothesis strategies for Markdown a caller might send: unicode, CRLF, long text."""

from __future__ import annotations

from hypothesis import strategies as st

# Lines that cannot open a heading or a fence; everything else (unicode, punctuation, spaces) is fair game.
_LINE_CHARS = st.characters(exclude_categories=["Cs"], exclude_characters="\r\n\x00`~#")
line = st.text(_LINE_CHARS, max_size=80)
newline = st.sampled_from(["\n", "\r\n"])


@st.composite
def markdown(draw: st.DrawFn, max_lines: int = 12) -> str:
    lines = draw(st.lists(line, min_size=1, max_size=max_lines))
    lines = [*lines, draw(line.filter(lambda s: s.strip() != ""))]
    text = lines[0]
    for item in lines[1:]:
        text += draw(newline) + item
    if draw(st.booleans()):
        text += "\n\n```python\nprint('## not a heading')\n```"
    return text


long_markdown = st.builds(lambda body, n: (body + "\n") * n, markdown(max_lines=4), st.integers(50, 200))


# -- globs and the paths they match ---------------------------------------------------------------

# Path characters: letters and digits inside and outside the classes below, and punctuation that no
# class names, so "a character no glob names" is always among them.
PATH_CHARS = "abxzQ0~.-"
_GLOB_ATOMS = ["a", "b", "x", "0", ".", "*", "?", "[ab]", "[!a]", "[a-z]", "[0-9]", "[a-z0-9]", "[!a-z0-9]"]
_GLOB_ATOMS += ["[A-Za-z0-9._-]", "[!A-Za-z0-9._-]"]  # classes that cover every letter and digit
_glob_segment = st.one_of(st.just("**"), st.lists(st.sampled_from(_GLOB_ATOMS), min_size=1, max_size=3).map("".join))


def _real_path(path: str) -> bool:
    return all(s not in ("", ".", "..") for s in path.split("/"))


globs = st.lists(_glob_segment, min_size=1, max_size=3).map("/".join).filter(_real_path)
path_name = st.text(PATH_CHARS, min_size=1, max_size=3).filter(lambda s: s not in (".", ".."))
paths = st.lists(path_name, min_size=1, max_size=4).map("/".join)


def _class_members(body: str) -> str:
    chars, index = "", 0
    while index < len(body):
        if index + 2 < len(body) and body[index + 1] == "-":
            chars += "".join(chr(c) for c in range(ord(body[index]), ord(body[index + 2]) + 1))
            index += 3
        else:
            chars, index = chars + body[index], index + 1
    return chars


@st.composite
def instance(draw: st.DrawFn, glob: str) -> str:
    """A path made by filling in the glob's wildcards (it may not match: the caller checks with wcmatch)."""
    segments: list[str] = []
    for segment in glob.split("/"):
        if segment == "**":
            segments += draw(st.lists(path_name, max_size=2))
            continue
        out, index = "", 0
        while index < len(segment):
            if segment[index] == "[":
                end = segment.index("]", index)
                out += draw(st.sampled_from(PATH_CHARS + _class_members(segment[index + 1 : end].lstrip("!"))))
                index = end + 1
                continue
            char = segment[index]
            out += (
                draw(st.text(PATH_CHARS, max_size=2))
                if char == "*"
                else draw(st.sampled_from(PATH_CHARS))
                if char == "?"
                else char
            )
            index += 1
        segments.append(out)
    return "/".join(segments)

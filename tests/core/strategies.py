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

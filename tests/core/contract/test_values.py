"""JavaScript's trim, as the seed's validator applies it."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from handoff_core.contract.values import JS_ANY, JS_SPACE, header_pair, js_trim

JS_EDGES = re.compile(f"^[{JS_SPACE}]+|[{JS_SPACE}]+\\Z")  # the pattern js_trim's strip stands for
SPACES = st.sampled_from([*"\t\n\v\f\r \u00a0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff\x85\x1c\u200b"])
TEXT = st.lists(st.one_of(st.characters(), SPACES, st.characters(min_codepoint=0x1FFF, max_codepoint=0x200C))).map(
    "".join
)


@given(TEXT)
def test_js_trim_takes_off_what_the_js_space_pattern_matches_at_either_end(text: str) -> None:
    assert js_trim(text) == JS_EDGES.sub("", text)


def test_js_trim_keeps_what_python_strips_but_javascript_does_not() -> None:
    assert js_trim("\x85a\x1c") == "\x85a\x1c"
    assert js_trim("\ufeff\u2000a b\u200a\t") == "a b"


HEADER = re.compile(f"^([A-Za-z][A-Za-z0-9-]*):[{JS_SPACE}]*({JS_ANY}*?)[{JS_SPACE}]*\\Z")  # the seed's, in Python
KEYS = st.one_of(
    st.sampled_from(["Status", "Outcome", "task-sha256", "A1", "1a", "-a", "", "Stätus", "K\u212a"]), st.text()
)
LINE_PARTS = st.one_of(SPACES, st.sampled_from([*"\n\r\u2028\u2029:ab é-"]), st.characters())


@given(KEYS, st.lists(LINE_PARTS, max_size=12).map("".join), st.booleans())
def test_a_header_line_is_read_as_the_seed_pattern_reads_it(key: str, rest: str, colon: bool) -> None:
    line = f"{key}{':' if colon else ''}{rest}"
    found = HEADER.match(line)
    assert header_pair(line) == (found.groups() if found else None)

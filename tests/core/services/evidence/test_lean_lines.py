"""The renderer's lines read without ``re`` or ``json``: whatever this reads, it reads as the pattern
and JSON reading it replaced do; a line that reading refused or could not parse, it does not read."""

from __future__ import annotations

import json
import re

from hypothesis import given
from hypothesis import strategies as st

from handoff_core.contract.frontmatter import quote
from handoff_core.services.evidence.lean_lines import read_lines, simple_hex, simple_name

_LINE = re.compile(r'^([a-z_]+): (?:"([ !#-\[\]-~]*)"|(0|[1-9][0-9]{0,8})|(\[[ !#-\[\]-~"]*\]))$')


def oracle(block: str) -> dict[str, object] | str | None:
    """The reading this replaced: a pattern per line, the flow by JSON ("error" where JSON raised)."""
    fields: dict[str, object] = {}
    for line in block.split("\n"):
        match = _LINE.match(line)
        if match is None or match.group(1) in fields:
            return None
        key, string, number, flow = match.groups()
        try:
            fields[key] = string if string is not None else int(number) if number is not None else json.loads(flow)
        except ValueError:
            return "error"
    return fields


def lean_value(value: object) -> bool:
    """A value the lean reader keeps: text, a number, or a list of texts or of objects of texts."""
    if isinstance(value, list):
        return all(
            isinstance(i, str) or (isinstance(i, dict) and all(isinstance(v, str) for v in i.values())) for i in value
        )
    return isinstance(value, (str, int))


pieces = st.sampled_from(['"', "[", "]", "{", "}", ",", ": ", ":", " ", "a", "_", "0", "7", "\\", "é", "\t", "-"])
lines = st.lists(pieces, max_size=14).map("".join)
rendered = st.builds(
    lambda key, value: f"{key}: {quote(value)}",
    st.sampled_from(["writable", "shared", "workspace", "n"]),
    st.one_of(
        st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=12),
        st.lists(st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=6), max_size=3),
        st.lists(st.fixed_dictionaries({"path": st.text(max_size=4), "owner": st.text(max_size=4)}), max_size=2),
    ),
)


@given(st.lists(st.one_of(lines, rendered), min_size=1, max_size=4).map("\n".join))
def test_what_the_lean_reading_reads_it_reads_as_the_pattern_and_json_did(block: str) -> None:
    expected, found = oracle(block), read_lines(block)
    if found is not None:
        assert expected == found
    elif isinstance(expected, dict):  # read before, not now: only values the lean task never keeps
        assert not all(lean_value(value) for value in expected.values())


@given(st.text(st.sampled_from("Aa0._-/ é"), max_size=12))
def test_names_and_hashes_are_read_as_their_patterns_read_them(text: str) -> None:
    assert simple_name(text) == bool(re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}", text))
    digest = (text * 64)[:64]
    assert simple_hex(digest) == bool(re.fullmatch(r"[0-9a-f]{64}", digest))

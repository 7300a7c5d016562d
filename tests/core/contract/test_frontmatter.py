from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from handoff_core.contract.frontmatter import _fast_mapping, load_yaml, quote, split_frontmatter
from handoff_core.contract.strict_yaml import load_strict
from handoff_core.errors import InvalidContent

keys = st.from_regex(r"\A[a-z_]{1,12}\Z").filter(
    lambda k: k not in {"y", "n", "yes", "no", "on", "off", "true", "false", "null"}
)
values = st.one_of(
    st.text(max_size=40),
    st.integers(min_value=0, max_value=10**9),
    st.lists(st.text(max_size=10), max_size=3),
    st.lists(st.dictionaries(keys, st.text(max_size=8), max_size=2), max_size=2),
)


@given(st.dictionaries(keys, values, min_size=1, max_size=6))
def test_the_fast_reader_agrees_with_the_strict_yaml_loader(fields: dict[str, object]) -> None:
    text = "\n".join(f"{key}: {quote(value)}" for key, value in fields.items())
    fast = _fast_mapping(text)
    assert load_strict(text, "test") == fields
    assert fast is None or fast == fields


@given(st.text(max_size=60))
def test_any_line_the_fast_reader_accepts_reads_the_same_in_yaml(line: str) -> None:
    fast = _fast_mapping(line)
    if fast is not None:
        assert load_strict(line, "test") == fast


@pytest.mark.parametrize("text", ['a: "x"\na: "y"', "a: 1\na: 2", "a: [1]\na: [2]"])
def test_a_key_given_twice_is_refused(text: str) -> None:
    with pytest.raises(InvalidContent):
        load_yaml(text, "test")


@pytest.mark.parametrize("text", ["no frontmatter", "---\nkey: 1\n", "---\n- a list\n---\n"])
def test_a_document_without_a_closed_mapping_frontmatter_is_refused(text: str) -> None:
    with pytest.raises(InvalidContent):
        split_frontmatter(text)

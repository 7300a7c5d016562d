from __future__ import annotations

import json

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from handoff_core.contract.frontmatter import _fast_mapping, load_yaml, plain_frontmatter, quote, split_frontmatter
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


# Lines of the fast reader's own grammar (``key: "text"``, ``key: 12``, ``key: [..]``), spaced every
# way JSON allows inside the brackets, with the keys of a flow mapping sometimes given twice.
_ASCII = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E, exclude_characters='"\\'), max_size=16)
_QUOTED = _ASCII.map(json.dumps)
_FLOW_MAPPING = st.tuples(
    st.lists(st.tuples(st.one_of(_QUOTED, st.sampled_from(['"a"'])), _QUOTED), max_size=3),
    st.sampled_from([":", ": ", " : "]),
).map(lambda pairs: "{" + ", ".join(f"{key}{pairs[1]}{value}" for key, value in pairs[0]) + "}")
_FLOW = st.tuples(st.lists(st.one_of(_QUOTED, _FLOW_MAPPING), max_size=3), st.sampled_from([",", ", ", " , "])).map(
    lambda items: "[" + items[1].join(items[0]) + "]"
)
_VALUES = {"text": _QUOTED, "number": st.from_regex(r"\A(0|[1-9][0-9]{0,8})\Z"), "flow": _FLOW}
fast_lines = st.lists(
    st.tuples(keys, st.sampled_from(sorted(_VALUES)).flatmap(lambda form: _VALUES[form].map(lambda v: (form, v)))),
    min_size=1,
    max_size=4,
    unique_by=lambda field: field[0],
)


@given(fast_lines)
def test_any_line_the_fast_reader_accepts_reads_the_same_in_yaml(fields: list[tuple[str, tuple[str, str]]]) -> None:
    text = "\n".join(f"{key}: {value}" for key, (_, value) in fields)
    for _, (form, _) in fields:
        event(f"a {form} value")
    fast = _fast_mapping(text)
    if fast is None:  # handed to the strict loader, which must then refuse it too (a key given twice)
        event("handed to the strict loader")
        with pytest.raises(InvalidContent):
            load_strict(text, "test")
    else:
        assert load_strict(text, "test") == fast


@pytest.mark.parametrize("text", ['a: "x"\na: "y"', "a: 1\na: 2", "a: [1]\na: [2]", 'a: [{"k": "x", "k": "y"}]'])
def test_a_key_given_twice_is_refused(text: str) -> None:
    with pytest.raises(InvalidContent):
        load_yaml(text, "test")


@pytest.mark.parametrize("text", ["no frontmatter", "---\nkey: 1\n", "---\n- a list\n---\n"])
def test_a_document_without_a_closed_mapping_frontmatter_is_refused(text: str) -> None:
    with pytest.raises(InvalidContent):
        split_frontmatter(text)


frontmatter_lines = st.one_of(
    st.builds(lambda k, v: f"{k}: {quote(v)}", keys, values),
    st.sampled_from(
        ["---", "--- ", "kind: review", 'kind: "review"\r', "a: 1", "a: 01", "yes: 1", "", "# x", "\ufeff"]
    ),
)


@given(
    st.lists(frontmatter_lines, max_size=8),
    st.sampled_from(["---\n", "---\r\n", "\ufeff---\n", "--\n", ""]),
    st.sampled_from(["---\n", "---", "---\r\n", ""]),
    st.text(max_size=20),
)
def test_the_plain_frontmatter_reader_agrees_with_split_frontmatter(
    lines: list[str], opening: str, closing: str, body: str
) -> None:
    text = opening + "".join(f"{line}\n" for line in lines) + closing + body
    plain = plain_frontmatter(text)
    try:
        fields: dict[str, object] | None = dict(split_frontmatter(text)[0])
    except InvalidContent:
        fields = None
    event("plain" if plain is not None else "asks split_frontmatter")
    assert plain is None or plain == fields

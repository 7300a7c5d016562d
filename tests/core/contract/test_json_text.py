"""The validator's JSON answers are the text json.dumps writes, byte for byte."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from handoff_core.contract.json_text import dumps

TEXT = st.text(alphabet=st.one_of(st.characters(), st.sampled_from([*'"\\\b\f\n\r\t\x00\x1f\x7f\u2028\ud800'])))
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), TEXT)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(TEXT, inner, max_size=4)),
    max_leaves=20,
)


@given(VALUES, st.sampled_from([None, 0, 2, 4]))
def test_plain_values_are_written_as_json_dumps_writes_them(value: object, indent: int | None) -> None:
    assert dumps(value, indent) == json.dumps(value, ensure_ascii=False, indent=indent)


def test_anything_else_is_written_by_json_itself() -> None:
    value = {"ratio": 0.5, "pair": (1, "a"), "nested": {"x": [1.5]}}
    assert dumps(value, 2) == json.dumps(value, ensure_ascii=False, indent=2)


@pytest.mark.slow  # starts a process
def test_writing_a_plain_answer_does_not_import_json() -> None:
    code = (
        "import sys; from handoff_core.contract.json_text import dumps; "
        "dumps({'a': [1, None]}, 2); print('json' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert result.stdout.strip() == "False", result.stderr

"""How a REPORT's signature is read: strict base64, decoded without loading the base64 module."""

from __future__ import annotations

import base64
import binascii

from hypothesis import given
from hypothesis import strategies as st

from handoff_core.contract.proof import b64decoded


def _decoded_by_base64(text: str) -> bytes | str:
    try:
        return base64.b64decode(text, validate=True)
    except (ValueError, binascii.Error):
        return "ValueError"


def _decoded_here(text: str) -> bytes | str:
    try:
        return b64decoded(text)
    except ValueError:
        return "ValueError"


@given(st.one_of(st.binary(max_size=70).map(lambda b: base64.b64encode(b).decode()), st.text(max_size=70)), st.data())
def test_strict_base64_is_read_as_base64_reads_it(text: str, data: st.DataObject) -> None:
    """Well formed, cut, padded wrongly, with foreign or non-ASCII characters: the same bytes or the same refusal."""
    if text and data.draw(st.booleans()):
        at = data.draw(st.integers(0, len(text)))
        text = text[:at] + data.draw(st.sampled_from(["=", "==", "\n", " ", "-", "_", "é", "A"])) + text[at:]
    assert _decoded_here(text) == _decoded_by_base64(text)

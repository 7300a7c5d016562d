"""A pattern compiled on first use answers as the compiled pattern does, and compiles nothing before."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from handoff_core.contract.pattern import compile_on_use

SOURCES = [
    (r"^[0-9]{4}-[0-9]{2}\Z", 0),
    (r"(?:^|[\\/])(?:\.\.\.|unknown|todo)(?:[\\/]|\Z)", re.IGNORECASE | re.ASCII),
    (r"([a-z]+)=([0-9]*)", re.M),
]


@given(st.sampled_from(SOURCES), st.text(alphabet="ab09=-\n/.unkowtdUNK", max_size=30))
def test_every_method_answers_as_the_compiled_pattern(source: tuple[str, int], text: str) -> None:
    later, now = compile_on_use(*source), re.compile(*source)
    for method in ("match", "fullmatch", "search"):
        found, expected = getattr(later, method)(text), getattr(now, method)(text)
        assert (found and found.groups(), found and found.span()) == (
            expected and expected.groups(),
            expected and expected.span(),
        )
    assert later.findall(text) == now.findall(text)
    assert later.sub("#", text) == now.sub("#", text)
    assert later.split(text) == now.split(text)
    assert [m.span() for m in later.finditer(text)] == [m.span() for m in now.finditer(text)]
    assert (later.pattern, later.flags, later.groups) == (now.pattern, now.flags, now.groups)


def test_nothing_is_compiled_until_the_pattern_is_used() -> None:
    re.purge()
    later = compile_on_use(r"^never-compiled-before-[0-9]+\Z")
    assert later._compiled is None  # type: ignore[attr-defined]
    assert later.match("never-compiled-before-7") is not None
    assert later._compiled is not None  # type: ignore[attr-defined]
    assert later.match("x") is None


def test_a_bytes_pattern_is_compiled_on_use_alike() -> None:
    later = compile_on_use(rb"^Status:(.*)$", re.M)
    found = later.search(b"x\nStatus: done\n")
    assert found is not None
    assert found.group(1) == b" done"

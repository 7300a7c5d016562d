"""Glob overlap is decided exactly: checked against wcmatch's matcher on generated paths."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from wcmatch import glob as wc

from handoff_core.contract.globs import MAX_GLOB_LENGTH, MAX_GLOBS, Budget, glob_regex, overlap
from handoff_core.contract.scope import Scope
from handoff_core.errors import InvalidContent
from handoff_core.services.store import Store
from tests.conftest import implementation

FLAGS = wc.GLOBSTAR | wc.DOTGLOB
_atom = st.sampled_from(["a", "b", ".", "*", "?", "[ab]", "[!a]", "x"])
_segment = st.one_of(st.just("**"), st.lists(_atom, min_size=1, max_size=3).map("".join))
globs = (
    st.lists(_segment, min_size=1, max_size=3)
    .map("/".join)
    .filter(lambda g: all(s not in (".", "..") for s in g.split("/")))
)
_name = st.text("ab.x", min_size=1, max_size=3).filter(lambda s: s not in (".", ".."))
paths = st.lists(_name, min_size=1, max_size=4).map("/".join)


def matches(glob: str, path: str) -> bool:
    return bool(wc.globmatch(path, glob, flags=FLAGS))


@settings(max_examples=400, deadline=None)
@given(globs, paths)
def test_the_translation_accepts_exactly_the_paths_wcmatch_accepts(glob: str, path: str) -> None:
    assert (re.fullmatch(glob_regex(glob), path) is not None) == matches(glob, path)


@settings(max_examples=300, deadline=None)
@given(globs, globs, st.lists(paths, max_size=20))
def test_a_path_matching_both_globs_means_the_checker_reports_an_overlap(a: str, b: str, samples: list[str]) -> None:
    found = overlap(a, b)
    if found is None:
        assert not [p for p in samples if matches(a, p) and matches(b, p)]
    else:
        assert matches(a, found)
        assert matches(b, found)


@pytest.mark.parametrize(
    ("a", "b", "overlapping"),
    [
        ("src/a1/**", "src/a1/**", True),
        ("src/a1/**", "src/a2/**", False),
        ("src/**/*.py", "src/a/*", True),
        ("src/**/*.py", "src/**/*.md", False),
        ("**", "pyproject.toml", True),
        ("docs/*.md", "docs/sub/*.md", False),
        ("src/a*", "src/ab/**", False),  # a path is a file: src/ab itself is not under src/ab/
        ("src/a*", "src/ab", True),
        ("tests/test_[ab].py", "tests/test_c.py", False),
    ],
)
def test_known_pairs(a: str, b: str, overlapping: bool) -> None:
    assert (overlap(a, b) is not None) == overlapping


@pytest.mark.parametrize("glob", ["src//a", "src/./a", "src/[", "src/[a/b]", "a/[é]"])
def test_globs_the_checker_cannot_decide_exactly_are_refused(glob: str) -> None:
    with pytest.raises(InvalidContent):
        glob_regex(glob)


@pytest.mark.parametrize("marks", [7, 9, 40])
def test_a_wildcard_run_that_explodes_a_deterministic_automaton_is_decided_in_a_few_steps(marks: int) -> None:
    budget = Budget(20_000)
    found = overlap("src/*.py", "src/*a" + "?" * marks, budget)
    assert found is not None
    assert matches("src/*.py", found)
    assert matches("src/*a" + "?" * marks, found)


def test_a_hundred_by_a_hundred_disjoint_globs_cost_almost_nothing() -> None:
    budget = Budget(100_000)  # ten steps a pair
    mine = [f"src/a{i}/**" for i in range(100)]
    theirs = [f"src/b{i}*/**/*.py" for i in range(100)]
    assert not [1 for a in mine for b in theirs if overlap(a, b, budget) is not None]
    notes, sources = [f"**/m{i}*/notes.md" for i in range(100)], [f"**/n{i}*/main.py" for i in range(100)]
    assert not [1 for a in notes for b in sources if overlap(a, b, budget) is not None]


def test_a_check_over_its_budget_is_refused_with_what_to_change() -> None:
    with pytest.raises(InvalidContent) as caught:
        overlap("*" + "?*" * 40, "?*" * 40 + "a", Budget(1_000))
    assert "fewer, plainer globs" in caught.value.message


@pytest.mark.parametrize(
    "globs", [tuple(f"src/m{i}/**" for i in range(MAX_GLOBS + 1)), ("src/" + "a" * MAX_GLOB_LENGTH,)]
)
def test_too_many_or_too_long_globs_are_refused_at_dispatch(store: Store, globs: tuple[str, ...]) -> None:
    with pytest.raises(InvalidContent):
        store.create_task(implementation(scope=Scope("required", globs)))
    assert store.queries.status() == []

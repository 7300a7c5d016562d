"""Glob overlap is decided exactly: checked against wcmatch's matcher on generated paths."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from wcmatch import glob as wc

from bench.requests import implementation
from handoff_core.contract.glob_overlap import Budget, overlap
from handoff_core.contract.globs import MAX_GLOB_LENGTH, MAX_GLOBS, glob_regex
from handoff_core.contract.scope import Scope
from handoff_core.errors import InvalidContent, OwnershipConflict
from handoff_core.services.writing.store import Store
from tests.support.strategies import globs, instance, paths

FLAGS = wc.GLOBSTAR | wc.DOTGLOB


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


@settings(max_examples=400, deadline=None)
@given(globs, globs, st.data())
def test_a_path_filled_in_from_either_glob_that_matches_both_is_found_as_an_overlap(
    a: str, b: str, data: st.DataObject
) -> None:
    found = overlap(a, b)
    for source in (a, b):
        path = data.draw(instance(source))
        if all(s not in ("", ".", "..") for s in path.split("/")) and matches(a, path) and matches(b, path):
            assert found is not None, path
    if found is not None:
        assert matches(a, found)
        assert matches(b, found)


@pytest.mark.parametrize("other", ["src/main.py", "**", "**/*.md", "src/[a-z0-9]*.py", "src/[!a-z0-9]*", "src/Q.py"])
def test_a_character_class_covering_letters_and_digits_is_intersected_without_a_crash(other: str) -> None:
    claimed = "src/[a-z0-9]*.py"
    found = overlap(claimed, other)
    expected = other in ("src/main.py", "**", "src/[a-z0-9]*.py")
    assert (found is not None) == expected
    if found is not None:
        assert matches(claimed, found)
        assert matches(other, found)


def test_classes_that_name_every_letter_and_digit_still_find_a_path_outside_them() -> None:
    found = overlap("[!A-Za-z0-9._-]", "*")
    assert found is not None
    assert matches("[!A-Za-z0-9._-]", found)


@pytest.mark.parametrize("other", ["src/main.py", "**", "**/*.md", "src/[a-z0-9]*.py"])
def test_dispatch_beside_a_character_class_claim_is_decided_not_a_crash(store: Store, other: str) -> None:
    store.create_task(implementation(scope=Scope(workspace="required", writable=("src/[a-z0-9]*.py",)), writer_limit=3))
    request = implementation("second", scope=Scope(workspace="required", writable=(other,)), writer_limit=3)
    if other == "**/*.md":
        assert store.create_task(request).created
    else:
        with pytest.raises(OwnershipConflict):
            store.create_task(request)


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
        store.create_task(implementation(scope=Scope(workspace="required", writable=globs)))
    assert store.queries.status() == []

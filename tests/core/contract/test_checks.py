"""A TASK's acceptance checks: rendered at the end of its Acceptance section, read back exactly, and
refused when a check could not be held faithfully."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from handoff_core.contract.checks import CHECKS_FENCE, CHECKS_START, Check, check_checks, split_checks
from handoff_core.contract.frontmatter import load_yaml
from handoff_core.contract.markdown import sections
from handoff_core.contract.strict_yaml import load_strict
from handoff_core.contract.task import normalise_task
from handoff_core.contract.task_file import parse_task, render_task
from handoff_core.contract.validate import task_problems
from handoff_core.errors import InvalidContent
from handoff_core.layout import DEFAULT_CHECK_TIMEOUT, MAX_CHECK_TIMEOUT, MAX_CHECKS, TASK_SECTIONS
from tests.support.fences import headings, seed_body_lines
from tests.support.tasks import make_task

RUN = (
    st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp", "Co", "Cn")), min_size=1, max_size=80)
    .map(str.strip)
    .filter(lambda run: bool(run) and run.isprintable())
)
CWD = st.one_of(
    st.just("."),
    st.from_regex(r"\A[a-z0-9_-]{1,8}(/[a-z0-9_.-]{1,8}){0,2}\Z").filter(
        lambda c: ".." not in c.split("/") and "." not in c.split("/")
    ),
)
CHECK = st.builds(Check, RUN, CWD, st.integers(1, MAX_CHECK_TIMEOUT))


@settings(max_examples=150)
@given(checks=st.lists(CHECK, min_size=1, max_size=4, unique_by=lambda c: (c.run, c.cwd)))
def test_checks_render_and_read_back_exactly_and_the_seed_reads_the_same_sections(checks: list[Check]) -> None:
    task = make_task(checks=tuple(checks))
    text = render_task(task)
    assert parse_task(text) == normalise_task(task)
    assert parse_task(text).acceptance == "pytest exits 0"
    assert render_task(parse_task(text)) == text
    assert task_problems(text, "2026-11-30-demo", task.session, task.task) == []
    seen = [h.removeprefix("## ") for h in headings(seed_body_lines(text)) if h.startswith("## ")]
    assert seen == list(TASK_SECTIONS)
    assert list(sections(text)) == list(TASK_SECTIONS)


def test_each_check_is_listed_for_people_with_its_folder_and_timeout() -> None:
    text = render_task(make_task(checks=(Check("pytest -q tests/a1", "src", 120), Check("echo `date`"))))
    acceptance = sections(text)["Acceptance"]
    assert acceptance.startswith("pytest exits 0\n\n" + CHECKS_START)
    assert "  1. `pytest -q tests/a1` (in `src`, at most 120 s)" in acceptance
    assert f"  2. `` echo `date` `` (in `.`, at most {DEFAULT_CHECK_TIMEOUT} s)" in acceptance  # a span around it
    assert acceptance.rstrip().endswith("```")


def test_a_task_without_checks_renders_as_before() -> None:
    text = render_task(make_task())
    assert CHECKS_FENCE not in text
    assert CHECKS_START not in text


def test_an_acceptance_whose_checks_line_has_no_block_holds_no_checks() -> None:
    # A TASK published before checks existed, with a line of that form in the Lead's own text.
    section = "Run the tests.\n\n- Checks: the suite and the linter\n"
    assert split_checks(section) == (section, ())


@pytest.mark.parametrize(
    ("check", "why"),
    [
        (Check("pytest\n-q"), "one printable shell line"),
        (Check(" pytest"), "one printable shell line"),
        (Check("x" * 2001), "one printable shell line"),
        (Check("pytest", "../elsewhere"), "not a folder relative"),
        (Check("pytest", "/abs"), "not a folder relative"),
        (Check("pytest", "a/./b"), "not a folder relative"),
        (Check("pytest", "a\\b"), "not a folder relative"),
        (Check("pytest", ".", 0), "timeout_s"),
        (Check("pytest", ".", MAX_CHECK_TIMEOUT + 1), "timeout_s"),
        (Check("pytest", ".", True), "timeout_s"),
    ],
)
def test_a_check_that_cannot_be_held_faithfully_is_refused_saying_why(check: Check, why: str) -> None:
    with pytest.raises(InvalidContent) as raised:
        check_checks((check,))
    assert raised.value.code == "invalid_content"
    assert why in raised.value.message


def test_too_many_checks_and_a_check_listed_twice_are_refused() -> None:
    with pytest.raises(InvalidContent, match="at most"):
        check_checks(tuple(Check(f"true {n}") for n in range(MAX_CHECKS + 1)))
    with pytest.raises(InvalidContent, match="listed twice"):
        check_checks((Check("pytest", "src/"), Check("pytest", "src")))


def test_a_folder_is_normalised_and_the_root_is_a_dot() -> None:
    assert check_checks((Check("a", ""), Check("b", "src/"), Check("c", " ./ ".strip()))) == (
        Check("a", "."),
        Check("b", "src"),
        Check("c", "."),
    )


def test_the_leads_acceptance_text_may_not_hold_a_checks_line_of_its_own() -> None:
    with pytest.raises(InvalidContent, match="acceptance_checks") as raised:
        render_task(make_task(acceptance="All good.\n- Checks: run them"))
    assert raised.value.code == "invalid_content"


def test_a_hand_edited_checks_block_that_is_not_ours_is_refused_on_reading() -> None:
    text = render_task(make_task(checks=(Check("pytest"),)))
    edited = re.sub(r'"timeout_s": \d+', '"timeout_s": "soon"', text)
    with pytest.raises(InvalidContent, match="handoff-checks"):
        parse_task(edited)


@given(st.one_of(st.integers(-(10**12), 10**12), st.sampled_from(["1e3", "true", "012", "-0", "0x10", "1.5", "null"])))
def test_the_fast_reading_of_a_checks_line_agrees_with_yaml(value: int | str) -> None:
    line = f'checks: [{{"run": "x", "cwd": ".", "timeout_s": {value}}}]'
    try:
        strict = load_strict(line, "probe")
    except InvalidContent:
        strict = None
    try:
        fast = load_yaml(line, "probe")
    except InvalidContent:
        fast = None
    assert fast == strict

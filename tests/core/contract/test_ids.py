from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from handoff_core.contract.ids import (
    TOPIC_RE,
    Ref,
    is_change_id,
    is_round_id,
    next_round,
    next_task,
    parse_ref,
    ref_in,
    round_base,
    task_number,
)
from handoff_core.errors import InvalidIdentifier
from handoff_core.layout import task_parts


@pytest.mark.parametrize(
    "value",
    [
        "20261130T044500Z",
        "20261130T044500Z-01",
        "20261130T044500Z-10",
        "20240229T235959Z",
        "20261130T044500Z-100",
    ],
)
def test_round_ids_that_are_real_utc_instants_are_accepted(value: str) -> None:
    assert is_round_id(value)


@pytest.mark.parametrize(
    "value",
    [
        "20261130T044500Z-1",
        "20261130T044500Z-00",
        "20261130T044500Z-001",
        "20230229T000000Z",
        "20261131T000000Z",
        "20261130T240000Z",
        "20261130T236000Z",
        "20261130T235960Z",
        "20261130t044500z",
        "2026-11-30T04:45:00Z",
        "",
    ],
)
def test_round_ids_off_grammar_or_not_real_instants_are_refused(value: str) -> None:
    assert not is_round_id(value)


@pytest.mark.parametrize(("value", "number"), [("001-a", 1), ("042-review-a1", 42), ("1000-x", 1000)])
def test_task_ids_yield_their_number(value: str, number: int) -> None:
    assert task_number(value) == number


@pytest.mark.parametrize(
    "value",
    ["0001-x", "000-x", "01-x", "001-Topic", "001-", "001--x", "001-x-", "001_x", "..", "-rf", "001-a/../x"],
)
def test_task_ids_off_grammar_are_refused(value: str) -> None:
    assert task_number(value) is None


@given(st.integers(min_value=1, max_value=10**6), st.from_regex(r"\A[a-z0-9]+(-[a-z0-9]+){0,3}\Z"))
def test_every_canonical_task_id_parses_to_its_number(number: int, topic: str) -> None:
    assert task_number(f"{number:03d}-{topic}") == number
    assert task_number(f"0{number:03d}-{topic}") is None


JS_MAX_SAFE_INTEGER = 2**53 - 1  # the seed reads a task number as a JavaScript Number
# Digits as a hand-written id may have them: short, zero-padded, zero, near and past the bound.
task_digits = st.one_of(
    st.from_regex(r"\A[0-9]{1,5}\Z"),
    st.integers(min_value=0, max_value=10**6).map(lambda n: f"{n:03d}"),
    st.integers(min_value=JS_MAX_SAFE_INTEGER - 2, max_value=JS_MAX_SAFE_INTEGER + 2).map(str),
)


def test_text_shaped_like_a_task_id_is_one_exactly_when_its_number_renders_back_canonically() -> None:
    outcomes: Counter[str] = Counter()

    @given(task_digits, st.from_regex(TOPIC_RE))
    def check(digits: str, topic: str) -> None:
        canonical = 0 < int(digits) <= JS_MAX_SAFE_INTEGER and f"{int(digits):03d}" == digits
        number = task_number(f"{digits}-{topic}")
        outcomes["accepted" if number is not None else "refused"] += 1
        assert number == (int(digits) if canonical else None)

    check()
    assert outcomes["accepted"] > 0  # the strategy reaches both answers, so the assert judged both
    assert outcomes["refused"] > 0


@given(st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2999, 12, 31), timezones=st.just(UTC)))
def test_every_utc_instant_makes_a_valid_round_id(moment: datetime) -> None:
    assert is_round_id(round_base(moment))
    assert is_round_id(f"{round_base(moment)}-07")


def test_a_taken_round_gets_the_smallest_unused_suffix() -> None:
    base = "20261130T044500Z"
    assert next_round(base, []) == base
    assert next_round(base, [base]) == f"{base}-01"
    assert next_round(base, [base, f"{base}-01", f"{base}-03"]) == f"{base}-02"


def test_the_next_task_number_follows_the_largest_used_and_never_fills_gaps() -> None:
    assert next_task("a", []) == "001-a"
    assert next_task("b", ["001-a", "007-x", "README.md"]) == "008-b"
    assert next_task("c", ["999-z"]) == "1000-c"


@pytest.mark.parametrize("topic", ["Topic", "a_b", "", "-a", "a--b", "a" * 60, "café"])
def test_a_topic_off_grammar_is_refused(topic: str) -> None:
    with pytest.raises(InvalidIdentifier) as caught:
        next_task(topic, [])
    assert caught.value.code == "invalid_id"


def test_a_ref_splits_into_checked_parts() -> None:
    ref = parse_ref("2026-11-30-demo/20261130T044500Z/001-a")
    assert (ref.change, ref.session, ref.task) == ("2026-11-30-demo", "20261130T044500Z", "001-a")
    assert is_change_id("2026-11-30-demo-02")


@pytest.mark.parametrize(
    "text", ["x/y", "2026-11-30-demo/20261130T044500Z/../001-a", "2026-11-30-Demo/20261130T044500Z/001-a"]
)
def test_a_malformed_ref_is_refused(text: str) -> None:
    with pytest.raises(InvalidIdentifier) as caught:
        parse_ref(text)
    assert caught.value.code == "invalid_id"


@given(st.integers(min_value=0, max_value=9999), st.integers(min_value=1, max_value=12), st.integers(1, 31))
def test_a_round_date_is_real_exactly_when_the_calendar_has_it(year: int, month: int, day: int) -> None:
    """Gregorian days, year 0 counted as leap (JavaScript's Date takes it; Python's calendar needs a stand-in)."""
    import calendar

    real = day <= calendar.monthrange(year or 2000, month)[1]
    assert is_round_id(f"{year:04d}{month:02d}{day:02d}T000000Z") is real


def test_the_task_of_a_path_in_the_tree_is_found_from_its_parts_whatever_lies_below_it() -> None:
    ref = Ref("2026-11-30-demo", "20261130T044500Z", "001-a")
    assert ref_in(task_parts(*ref)) == ref
    assert ref_in((*task_parts(*ref), "REPORT.md")) == ref
    assert ref_in((*task_parts(*ref), "deep", "er")) == ref


@pytest.mark.parametrize(
    "parts",
    [
        ("specdev", "changes", "2026-11-30-demo", "sessions", "20261130T044500Z"),  # a round, not a task
        ("specdev", "archive", "2026-11-30-demo", "sessions", "20261130T044500Z", "001-a"),
        ("specdev", "changes", "2026-11-30-demo", "rounds", "20261130T044500Z", "001-a"),
        ("specdev", "changes", "2026-11-30-demo", "sessions", "20261130T044500Z", "0001-a"),
        ("specdev", "changes", "not-a-change", "sessions", "20261130T044500Z", "001-a"),
    ],
)
def test_a_path_outside_any_active_task_has_no_task(parts: tuple[str, ...]) -> None:
    assert ref_in(parts) is None

"""The contract's names: temp names, folders, the sentence rule and the vocabularies."""

from __future__ import annotations

from typing import get_args

from hypothesis import given
from hypothesis import strategies as st

from handoff_core import layout
from handoff_core.errors import UnsafePath
from handoff_core.files.paths import check_name
from handoff_core.files.publishing import new_temp_name


@given(st.sampled_from(layout.HANDOFF_FILES))
def test_every_publish_temp_name_is_recognised_as_temp_and_no_handoff_file_is(name: str) -> None:
    assert layout.is_temp(new_temp_name(name))
    assert not layout.is_temp(name)


def test_a_temp_name_with_a_trailing_newline_is_not_a_temp_name() -> None:
    assert not layout.is_temp(new_temp_name("REPORT.md") + "\n")


def _plain(name: str) -> bool:
    try:
        check_name(name)
    except UnsafePath:
        return False
    return True


_NAMES = st.text(min_size=1, max_size=60).filter(_plain)  # any name the walker takes


@given(_NAMES)
def test_every_temp_name_publishing_makes_is_recognised_as_the_temp_of_its_name(name: str) -> None:
    temp = new_temp_name(name)
    assert layout.is_temp(temp)
    assert layout.temp_target(temp) == name


def test_a_task_lives_under_its_change_and_round() -> None:
    parts = layout.task_parts("2026-11-30-demo", "20261130T044500Z", "001-a")
    assert parts == ("specdev", "changes", "2026-11-30-demo", "sessions", "20261130T044500Z", "001-a")


def test_the_focused_handoff_is_three_to_five_sentences() -> None:
    assert [n for n in range(8) if layout.focused_length_ok(n)] == [3, 4, 5]


def test_each_vocabulary_tuple_is_its_literal() -> None:
    assert get_args(layout.Kind) == layout.KINDS
    assert layout.REPORT_STATUSES == ("completed", "blocked", "failed", "cancelled")
    assert set(layout.CLOSING_FILES) < set(layout.HANDOFF_FILES)

"""The contract's names: temp names, folders, the sentence rule and the vocabularies."""

from __future__ import annotations

import ast
import inspect
from types import ModuleType
from typing import get_args

import pytest
from hypothesis import given
from hypothesis import strategies as st

from handoff_core import layout
from handoff_core.contract import proof
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


def _literals_for_the_type_checker(module: ModuleType) -> dict[str, tuple[object, ...]]:
    """Each ``Name = Literal[...]`` the module spells out under ``if TYPE_CHECKING:``, with its values."""
    found: dict[str, tuple[object, ...]] = {}
    for node in ast.walk(ast.parse(inspect.getsource(module))):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for statement in node.body:
                if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Subscript):
                    values = statement.value.slice
                    items = values.elts if isinstance(values, ast.Tuple) else [values]
                    (target,) = statement.targets
                    assert isinstance(target, ast.Name)
                    found[target.id] = tuple(ast.literal_eval(item) for item in items)
    return found


def test_each_literal_the_type_checker_reads_is_its_vocabulary_tuple() -> None:
    """The tuples are the vocabularies' home; the Literals spelled out for mypy must not drift from them."""
    written = _literals_for_the_type_checker(layout)
    assert written == {name: tuple(values) for name, values in layout.VOCABULARIES.items()}
    assert _literals_for_the_type_checker(proof) == {"Proof": proof.PROOFS}


@pytest.mark.parametrize("name", sorted(layout.VOCABULARIES))
def test_a_vocabulary_literal_asked_for_at_run_time_is_made_from_its_tuple(name: str) -> None:
    assert get_args(getattr(layout, name)) == layout.VOCABULARIES[name]
    assert get_args(proof.Proof) == proof.PROOFS


def test_a_name_layout_does_not_have_is_still_an_attribute_error() -> None:
    with pytest.raises(AttributeError):
        layout.Kinds  # type: ignore[attr-defined]  # noqa: B018
    with pytest.raises(AttributeError):
        proof.Proofs  # type: ignore[attr-defined]  # noqa: B018


@given(st.text(alphabet=st.sampled_from(".tmpabcdef0123456789xyz/\n"), max_size=60))
def test_a_temp_name_is_read_as_its_pattern_reads_it(name: str) -> None:
    import re

    pattern = re.compile(rf"^\.(?P<target>.+)\.[0-9a-f]{{{2 * layout.TEMP_TOKEN_BYTES}}}\.tmp\Z", re.DOTALL)
    found = pattern.match(name)
    assert layout.temp_target(name) == (found["target"] if found else None)
    token = "a" * 2 * layout.TEMP_TOKEN_BYTES
    assert layout.temp_target(f".{name}.{token}.tmp") == (name or None)

"""A change README's ``Outcome:`` line, read as the seed's pattern reads it."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from handoff_core.contract.change import read_outcome
from handoff_core.contract.markdown import split_lines
from handoff_core.contract.values import JS_ANY, JS_SPACE
from handoff_core.layout import OUTCOMES

OUTCOME = re.compile(f"^Outcome:[{JS_SPACE}]*({JS_ANY}*?)[{JS_SPACE}]*\\Z")


def by_pattern(readme: str) -> str | None:
    values = [m.group(1) for line in split_lines(readme.removeprefix("\ufeff")) if (m := OUTCOME.match(line))]
    return values[0] if len(values) == 1 and values[0] in OUTCOMES else None


LINES = st.one_of(
    st.builds(
        "{}{}{}{}".format,
        st.sampled_from(["Outcome:", "Outcome :", "outcome:", " Outcome:", "\ufeffOutcome:"]),
        st.sampled_from(["", " ", "\t", "\u3000", "\ufeff", "\x85"]),
        st.sampled_from([*OUTCOMES, "archived", "", "active done"]),
        st.sampled_from(["", " ", "\u2028", "\r", "\u00a0 "]),
    ),
    st.text(max_size=20),
)


@given(st.lists(LINES, max_size=4), st.sampled_from(["\n", "\r\n", "\r"]), st.booleans())
def test_the_outcome_is_read_as_the_seed_pattern_reads_it(lines: list[str], end: str, bom: bool) -> None:
    readme = ("\ufeff" if bom else "") + end.join(lines)
    assert read_outcome(readme) == by_pattern(readme)


def test_one_active_line_is_active_and_two_are_none() -> None:
    assert read_outcome("# x\nOutcome:  active \n") == "active"
    assert read_outcome("Outcome: active\nOutcome: active\n") is None

"""A status page: counts for everything asked about, the tasks a view selects, a budget, a cursor."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from handoff_core.contract.ids import Ref
from handoff_core.errors import InvalidInput
from handoff_core.layout import RECENT_ARRIVAL_SECONDS, TASK_STATES
from handoff_core.services.tree.status import TaskStatus
from handoff_core.services.tree.status_page import changed_since, page_status

NOW = 2_000_000_000.0
CHANGE = "2026-11-30-demo"


def task(number: int, state: str = "returned", **fields: object) -> TaskStatus:
    values: dict[str, Any] = {
        "ref": Ref(CHANGE, f"20261130T{number // 100:06d}Z", f"{number % 100 + 1:03d}-t"),
        "kind": "review",
        "state": state,
        "report_status": "completed" if state == "returned" else None,
        "scope": None,
        "has_locator": False,
        "temp_files": (),
        "problems": (),
        "outstanding": state == "dispatched",
        "closed_at": NOW - 2 * RECENT_ARRIVAL_SECONDS if state in ("returned", "released") else None,
        "dispatched_at": NOW - 3 * RECENT_ARRIVAL_SECONDS,
    }
    return TaskStatus(**{**values, **fields})


def flat(_: TaskStatus) -> int:
    return 100


def test_the_default_view_lists_what_needs_the_lead_and_counts_everything() -> None:
    old, recent = task(0), task(1, closed_at=NOW - 60)
    waiting, broken = task(2, "dispatched"), task(3, "invalid", problems=("TASK.md is missing Goal",))
    page = page_status([old, recent, waiting, broken], "needs_lead", now=NOW, size=flat)
    assert page.tasks == [recent, waiting, broken]
    assert page.counts == {"returned:completed": 2, "dispatched": 1, "invalid": 1}
    assert page.next_cursor == ""


def test_a_state_view_lists_only_that_state() -> None:
    tasks = [task(0), task(1, "dispatched"), task(2, "released")]
    assert [t.state for t in page_status(tasks, "released", now=NOW, size=flat).tasks] == ["released"]


def test_a_page_stops_at_the_budget_and_its_cursor_continues_after_the_last_task() -> None:
    tasks = [task(n) for n in range(5)]
    first = page_status(tasks, "all", now=NOW, size=flat, budget=250)
    assert first.tasks == tasks[:2]
    second = page_status(tasks, first.next_cursor, now=NOW, size=flat, budget=250)
    assert second.tasks == tasks[2:4]
    assert page_status(tasks, second.next_cursor, now=NOW, size=flat, budget=250).tasks == tasks[4:]


def test_a_task_larger_than_the_budget_still_gets_a_page_of_its_own() -> None:
    tasks = [task(0), task(1)]
    page = page_status(tasks, "all", now=NOW, size=lambda _: 10_000, budget=100)
    assert (page.tasks, page.next_cursor) == ([tasks[0]], f"all|{tasks[0].ref}")


@given(
    sizes=st.lists(st.integers(min_value=1, max_value=400), max_size=60),
    budget=st.integers(min_value=1, max_value=1_000),
)
def test_paging_a_view_returns_every_task_exactly_once(sizes: list[int], budget: int) -> None:
    tasks = [task(n, "dispatched" if n % 3 else "returned") for n in range(len(sizes))]
    size_of = {t.ref: size for t, size in zip(tasks, sizes, strict=True)}
    seen: list[Ref] = []
    view = "all"
    for _ in range(len(tasks) + 1):  # bounded: one page per task at worst
        page = page_status(tasks, view, now=NOW, size=lambda t: size_of[t.ref], budget=budget)
        assert sum(size_of[t.ref] for t in page.tasks) <= budget or len(page.tasks) == 1
        seen += [t.ref for t in page.tasks]
        if not page.next_cursor:
            break
        view = page.next_cursor
    assert seen == [t.ref for t in tasks]


@pytest.mark.parametrize("view", ["everything", "all|not-a-ref", "sideways|2026-11-30-demo/20261130T000000Z/001-t"])
def test_an_unknown_view_or_a_forged_cursor_is_refused(view: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        page_status([task(0)], view, now=NOW, size=flat)
    assert caught.value.code == "invalid_input"


def test_since_keeps_the_tasks_whose_files_appeared_at_or_after_it() -> None:
    old = task(1)
    dispatched_late = task(2, "dispatched", dispatched_at=NOW - 60)
    returned_late = task(3, closed_at=NOW - 60)
    released_at_cut = task(4, "released", released_at=NOW - 3600, closed_at=None)
    cut = datetime.fromtimestamp(NOW - 3600, UTC).isoformat()
    kept = changed_since([old, dispatched_late, returned_late, released_at_cut], cut)
    assert kept == [dispatched_late, returned_late, released_at_cut]
    assert changed_since([old], cut.replace("+00:00", "Z")) == []


@pytest.mark.parametrize("since", ["yesterday", "2026-12-01T09:00:00", "", "2026-13-01T00:00Z"])
def test_since_without_a_zone_or_not_a_time_is_refused(since: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        changed_since([task(1)], since)
    assert caught.value.code == "invalid_input"


LABELLED = st.tuples(
    st.sampled_from(TASK_STATES),
    st.sampled_from([None, "", "completed", "blocked", "?"]),
    st.booleans(),
    st.booleans(),
)


@given(st.lists(LABELLED, max_size=12))
def test_the_counts_are_one_per_label_in_the_order_the_labels_first_appear(
    specs: list[tuple[str, str | None, bool, bool]],
) -> None:
    tasks = [
        task(n, state, report_status=word, original=original, judged=judged)
        for n, (state, word, original, judged) in enumerate(specs)
    ]
    page = page_status(tasks, "all", now=NOW, size=flat)
    expected = dict(Counter(t.label for t in tasks))
    assert list(page.counts.items()) == list(expected.items())
    assert page.unjudged == sum(1 for t in tasks if not t.judged)

"""One round per plan: a dispatch continues the change's open round unless a new one is asked for."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bench.requests import implementation, report_of, review
from handoff_core.errors import HandoffError, InvalidContent
from handoff_core.services.writing.store import Store
from tests.support.changes import CHANGE, make_change

FOCUS = "Built A1. Kept the API. Stopped after tests. Next: review."


@pytest.fixture
def ticking(state_root: Path, project: Path) -> Store:
    """A store whose clock moves a minute per dispatch: each new round would get its own id."""
    now = [datetime(2026, 11, 30, 4, 45, tzinfo=UTC)]

    def clock() -> datetime:
        now[0] += timedelta(minutes=1)
        return now[0]

    return Store(state_root, project, clock=clock)


def rounds(state_root: Path, change: str = CHANGE) -> list[str]:
    return sorted(p.name for p in (state_root / "specdev" / "changes" / change / "sessions").iterdir())


def test_five_dispatches_of_one_plan_stay_in_one_round(ticking: Store, state_root: Path) -> None:
    refs = [ticking.create_task(review(f"review-{n}")).ref for n in range(5)]
    assert len({ref.session for ref in refs}) == 1
    assert [ref.task for ref in refs] == [f"{n + 1:03d}-review-{n}" for n in range(5)]
    assert len(rounds(state_root)) == 1


def test_a_restarted_store_continues_the_same_round(ticking: Store, state_root: Path, project: Path) -> None:
    first = ticking.create_task(review("review-a")).ref
    restarted = Store(state_root, project, clock=lambda: datetime(2026, 12, 5, tzinfo=UTC))
    assert restarted.create_task(review("review-b")).ref.session == first.session


def test_new_round_opens_one_and_later_dispatches_continue_it(ticking: Store) -> None:
    first = ticking.create_task(review("review-a")).ref
    second = ticking.create_task(review("review-b", new_round=True)).ref
    third = ticking.create_task(review("review-c")).ref
    assert first.session != second.session == third.session


def test_a_retry_stays_in_its_tasks_round_after_a_new_round_opened(ticking: Store) -> None:
    first = ticking.create_task(implementation()).ref
    ticking.write_report(report_of(first, status="failed", focused=FOCUS, artifacts="x", verification="exit 1"), CHANGE)
    newer = ticking.create_task(review("other", new_round=True)).ref
    retry = ticking.create_task(implementation("implement-a1-fix", retry_of=first)).ref
    assert (retry.session, newer.session != first.session) == (first.session, True)


@pytest.mark.parametrize("extra", [{"new_round": True}, {"session": "20261130T044500Z"}])
def test_a_retry_given_another_round_is_refused(ticking: Store, extra: dict[str, object]) -> None:
    first = ticking.create_task(implementation()).ref
    ticking.release_writer(first, "none", "never started")
    with pytest.raises(InvalidContent):
        ticking.create_task(implementation("implement-a1-fix", retry_of=first, **extra))


def test_rounds_of_another_change_are_not_continued(ticking: Store, state_root: Path) -> None:
    make_change(state_root, "2026-11-30-other")
    mine = ticking.create_task(review("review-a")).ref
    other = ticking.create_task(review("review-b", change="2026-11-30-other")).ref
    assert other.session != mine.session


def test_the_newest_round_is_the_open_one_even_with_a_suffix(state_root: Path, project: Path) -> None:
    frozen = Store(state_root, project, clock=lambda: datetime(2026, 11, 30, 4, 45, tzinfo=UTC))
    frozen.create_task(review("a"))
    for _ in range(10):
        frozen.create_task(review("a", new_round=True, force_new=True))
    assert frozen.create_task(review("b")).ref.session == "20261130T044500Z-10"


def test_a_round_given_that_does_not_exist_is_refused(ticking: Store) -> None:
    with pytest.raises(HandoffError) as caught:
        ticking.create_task(review(session="20200101T000000Z"))
    assert caught.value.code == "invalid_content"

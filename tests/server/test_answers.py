"""Answers asked at once, made once: the sharing itself, and fifty sessions of the real team server
over HTTP asking ``handoff_status`` together."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import AsyncExitStack, contextmanager
from typing import Any

import anyio
import pytest
from mcp import Client

from handoff_core.errors import ChangeNotFound, HandoffError
from handoff_core.services.tree.queries import Queries
from server.mcp.answers import SharedAnswers
from server.mcp.registration import HandoffTool
from tests.support.calls import call
from tests.support.team import Team, dispatch

pytestmark = pytest.mark.anyio
HOLD_SECONDS = 30  # the longest any held making waits for the test to let it go


class Held:
    """A ``make`` that counts its makings; the first one waits (on its thread) until ``release``."""

    def __init__(self, fail: HandoffError | None = None) -> None:
        self.made = 0
        self.started, self.release = threading.Event(), threading.Event()
        self.fail = fail

    def __call__(self) -> int:
        self.made += 1
        if self.made == 1:
            self.started.set()
            assert self.release.wait(HOLD_SECONDS), "the test never let the first making go"
        if self.fail is not None:
            raise self.fail
        return self.made

    async def running(self) -> None:
        """Until the first making has begun on its thread."""
        assert await anyio.to_thread.run_sync(self.started.wait, HOLD_SECONDS)


async def test_a_caller_arriving_while_its_answer_is_made_gets_the_next_making() -> None:
    answers: SharedAnswers[int] = SharedAnswers()
    make, got = Held(), {}

    async def ask(name: str) -> None:
        got[name] = await answers.answer("status", make)

    async with anyio.create_task_group() as group:
        group.start_soon(ask, "first")
        await make.running()
        for name in ("second", "third", "fourth"):
            group.start_soon(ask, name)
        await anyio.wait_all_tasks_blocked()
        assert answers.waiting("status") == 3
        make.release.set()
    assert got == {"first": 1, "second": 2, "third": 2, "fourth": 2}  # never the answer begun before they asked
    assert make.made == 2


async def test_different_questions_are_not_shared_nor_kept_waiting() -> None:
    answers: SharedAnswers[int] = SharedAnswers()
    held, other = Held(), Held()
    other.release.set()
    async with anyio.create_task_group() as group:
        group.start_soon(answers.answer, "change a", held)
        await held.running()
        with anyio.fail_after(HOLD_SECONDS):
            assert await answers.answer("change b", other) == 1  # while "change a" is still being made
        held.release.set()


async def test_a_refusal_reaches_every_caller_of_the_making() -> None:
    answers: SharedAnswers[int] = SharedAnswers()
    make, codes = Held(fail=ChangeNotFound("no change 2026-01-01-x; list the active ones")), []

    async def ask() -> None:
        with pytest.raises(HandoffError) as refused:
            await answers.answer("status", make)
        codes.append(refused.value.code)

    async with anyio.create_task_group() as group:
        group.start_soon(ask)
        await make.running()
        group.start_soon(ask)
        group.start_soon(ask)
        await anyio.wait_all_tasks_blocked()
        make.release.set()
    assert codes == [ChangeNotFound.code] * 3


async def test_callers_whose_first_caller_left_still_get_their_answer() -> None:
    answers: SharedAnswers[int] = SharedAnswers()
    make, got = Held(), []

    async def ask() -> None:
        got.append(await answers.answer("status", make))

    async with anyio.create_task_group() as group:
        group.start_soon(ask)
        await make.running()
        async with anyio.create_task_group() as leaving:
            leaving.start_soon(answers.answer, "status", make)  # the caller that makes the next answer
            await anyio.wait_all_tasks_blocked()
            group.start_soon(ask)  # joins that making
            await anyio.wait_all_tasks_blocked()
            assert answers.waiting("status") == 2
            leaving.cancel_scope.cancel()  # its maker leaves before it begins
        make.release.set()
    assert sorted(got) == [1, 2]
    assert make.made == 2


@contextmanager
def held_status_walks(monkeypatch: pytest.MonkeyPatch) -> Iterator[Held]:
    """Count the status walks of ``handoff_status`` (a Lead's glance at every change, or a task's round;
    the board's and dispatch's walks are not counted), the first held until the test lets it go."""
    walk = Queries.status
    counter = Held()

    def counted(self: Queries, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("glancing") or args[1:2] not in ((), (None,)):
            counter()
        return walk(self, *args, **kwargs)

    monkeypatch.setattr(Queries, "status", counted)
    try:
        yield counter
    finally:
        counter.release.set()


def asked_status(monkeypatch: pytest.MonkeyPatch, callers: int) -> anyio.Event:
    """An event set once ``callers`` calls of ``handoff_status`` have reached the server's tool."""
    run, asked, count = HandoffTool.run, anyio.Event(), [0]

    async def counted(self: HandoffTool, arguments: dict[str, Any], context: Any, convert_result: bool = False) -> Any:
        if self.name == "handoff_status":
            count[0] += 1
            if count[0] == callers:
                asked.set()
        return await run(self, arguments, context, convert_result)

    monkeypatch.setattr(HandoffTool, "run", counted)
    return asked


def without_ages(answers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**a, "tasks": [{k: v for k, v in t.items() if k != "age_seconds"} for t in a["tasks"]]} for a in answers]


async def sessions(stack: AsyncExitStack, open_one: Callable[[], Client], count: int) -> list[Client]:
    return [await stack.enter_async_context(open_one()) for _ in range(count)]


async def test_fifty_sessions_asking_status_at_once_walk_the_tree_twice_not_fifty_times(
    team: Team, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The defect: each session's call walked the tree on a thread of its own, so the CPU one answer
    cost grew with the sessions asking. Now one walk is under way while the others gather, then
    one more serves them all."""
    await dispatch(team, kind="review", workspace="", writable=[], shared=[])
    async with team.lead(mode=mode) as lead:
        lone = await call(lead, "handoff_status")
    answers: list[dict[str, Any]] = []
    with held_status_walks(monkeypatch) as walks:
        asked = asked_status(monkeypatch, 50)
        async with AsyncExitStack() as stack:
            clients = await sessions(stack, lambda: team.lead(mode=mode), 50)

            async def ask(client: Client) -> None:
                answers.append(await call(client, "handoff_status"))

            async with anyio.create_task_group() as group:
                for client in clients:
                    group.start_soon(ask, client)
                with anyio.fail_after(HOLD_SECONDS):
                    await asked.wait()
                walks.release.set()
    assert walks.made == 2
    same = without_ages([lone, *answers])
    assert all(answer == same[0] for answer in same)  # every answer is the one a lone call gets


async def test_executors_of_two_tasks_asking_at_once_each_see_their_own_task_only(
    team: Team, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    review = {"kind": "review", "workspace": "", "writable": [], "shared": []}
    first, second = await dispatch(team, topic="review-a", **review), await dispatch(team, topic="review-b", **review)
    seen: dict[str, list[str]] = {}
    with held_status_walks(monkeypatch) as walks:
        asked = asked_status(monkeypatch, 3)
        async with AsyncExitStack() as stack:
            a1 = await stack.enter_async_context(team.client("executor", first["report_token"], mode=mode))
            a2 = await stack.enter_async_context(team.client("executor", first["report_token"], mode=mode))
            b = await stack.enter_async_context(team.client("executor", second["report_token"], mode=mode))

            async def ask(name: str, client: Client) -> None:
                seen[name] = [t["ref"] for t in (await call(client, "handoff_status"))["tasks"]]

            async with anyio.create_task_group() as group:
                group.start_soon(ask, "a1", a1)
                await walks.running()  # a1's walk is held: b, then a2, ask while it is
                group.start_soon(ask, "b", b)
                group.start_soon(ask, "a2", a2)
                with anyio.fail_after(HOLD_SECONDS):
                    await asked.wait()
                walks.release.set()
    assert seen == {"a1": [first["ref"]], "a2": [first["ref"]], "b": [second["ref"]]}

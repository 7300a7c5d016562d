"""Answers asked at once, made once: callers asking the same question share one making of its answer.

Fifty sessions asking ``handoff_status`` together each used to walk the tree on a thread of their
own: fifty walks, up to forty threads fighting for the GIL, and the CPU each answer cost rose with
the number of callers. Here a question (its arguments and the task its session is scoped to) is
made at most once at a time, on at most ``THREADS`` threads for all questions; every caller that
asks while one is being made waits for the next making, which starts after all of them asked and
is shared by all of them. So no caller is ever given an answer begun before it asked: the answer
is the one a lone call made at that moment would have got.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Final, Generic, TypeVar

import anyio

__all__ = ["THREADS", "SharedAnswers"]

T = TypeVar("T")

THREADS: Final = 2  # threads making answers at once: beyond two, a walk mostly waits for the GIL


@dataclass
class _Making(Generic[T]):
    """One making of an answer, and every caller that shares it."""

    done: anyio.Event = field(default_factory=anyio.Event)
    callers: int = 1
    value: T | None = None
    error: BaseException | None = None
    abandoned: bool = False  # its first caller left before it was made: the others ask again


class SharedAnswers(Generic[T]):
    def __init__(self, threads: int = THREADS) -> None:
        self._threads = threads
        self._limiter: anyio.CapacityLimiter | None = None  # made in the event loop that uses it
        self._next: dict[Hashable, _Making[T]] = {}  # question -> the making not begun yet, open to joiners
        self._now: dict[Hashable, anyio.Event] = {}  # question -> the end of the making under way

    def waiting(self, question: Hashable) -> int:
        """How many callers wait for the next making of ``question`` (a running one not counted)."""
        making = self._next.get(question)
        return making.callers if making is not None else 0

    async def answer(self, question: Hashable, make: Callable[[], T]) -> T:
        """``make()``'s result (made on a thread), shared with every caller of the same ``question``
        that asked before its making began; a refusal it raises reaches each of them."""
        while True:
            making = self._next.get(question)
            if making is None:
                making = self._next[question] = _Making()
                await self._make(question, making, make)
            else:
                making.callers += 1
                await making.done.wait()
            if not making.abandoned:
                break
        if making.error is not None:
            raise making.error
        return making.value  # type: ignore[return-value]  # set whenever no error is

    async def _make(self, question: Hashable, making: _Making[T], make: Callable[[], T]) -> None:
        """Wait for the making under way (callers gather meanwhile), then make the answer for all of them."""
        cancelled = anyio.get_cancelled_exc_class()
        try:
            if (under_way := self._now.get(question)) is not None:
                await under_way.wait()
            del self._next[question]  # from here on, a new caller waits for the making after this one
            self._now[question] = making.done
            making.value = await anyio.to_thread.run_sync(make, limiter=self._capacity())
        except cancelled:
            making.abandoned = True  # the callers that joined ask again; one of them makes it
            raise
        except Exception as exc:
            making.error = exc
        finally:
            if self._next.get(question) is making:
                del self._next[question]
            if self._now.get(question) is making.done:
                del self._now[question]
            making.done.set()

    def _capacity(self) -> anyio.CapacityLimiter:
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(self._threads)
        return self._limiter

"""Whether two project-relative globs can match the same path (``globs`` holds their grammar).

Two globs overlap when some real path matches both. That is decided exactly and in bounded time:
each glob becomes a small automaton without determinising it (states grow with the glob's length,
never exponentially), and a breadth-first search over the product of the two automata and a third
one for "a real path" finds the shortest common path or proves there is none. The search is
charged to a ``Budget`` so that a dispatch checked under the state-root lock never runs long; a
check too large is refused with what to change.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from functools import lru_cache
from itertools import count

from handoff_core.contract.globs import ANY, Pred, glob_tokens
from handoff_core.errors import InvalidContent

__all__ = ["Budget", "overlap"]

DEFAULT_STEPS = 500_000  # product transitions one dispatch check may try (about 0.7 s here)


class Budget:
    """How much search one dispatch check may still do; refusing beats holding the lock for long."""

    def __init__(self, steps: int = DEFAULT_STEPS) -> None:
        self.steps = steps

    def spend(self, count: int) -> None:
        self.steps -= count
        if self.steps < 0:
            raise InvalidContent(
                "the writable and shared globs are too many or too complex to check against the outstanding "
                "claims in time; use fewer, plainer globs (a directory with /** is the cheapest)"
            )


class _Nfa:
    def __init__(self) -> None:
        self.edges: list[list[tuple[Pred, int]]] = [[]]
        self.eps: list[list[int]] = [[]]
        self.accept = 0
        self.moves: list[tuple[tuple[Pred, int], ...]] = []  # edges of each state's closure
        self.finals: frozenset[int] = frozenset()  # states whose closure accepts

    def seal(self, accept: int) -> _Nfa:
        self.accept = accept
        closures = [_closure(self, state) for state in range(len(self.edges))]
        self.moves = [tuple(edge for s in closure for edge in self.edges[s]) for closure in closures]
        self.finals = frozenset(state for state, closure in enumerate(closures) if accept in closure)
        return self

    def new(self) -> int:
        self.edges.append([])
        self.eps.append([])
        return len(self.edges) - 1

    def step(self, source: int, pred: Pred) -> int:
        target = self.new()
        self.edges[source].append((pred, target))
        return target

    def run(self, source: int) -> int:
        """One or more non-slash characters."""
        target = self.step(source, ANY)
        self.edges[target].append((ANY, target))
        return target


def _segment(nfa: _Nfa, state: int, tokens: tuple[tuple[Pred, bool], ...]) -> int:
    for pred, repeats in tokens:
        if repeats:
            loop = nfa.new()
            nfa.eps[state].append(loop)
            nfa.edges[loop].append((pred, loop))
            state = loop
        else:
            state = nfa.step(state, pred)
    return state


@lru_cache(maxsize=1024)
def _automaton(glob: str) -> _Nfa:
    """The glob's language, built the way ``glob_regex`` spells it."""
    nfa, state, joined = _Nfa(), 0, True  # joined: the next segment needs no separator
    segments = glob_tokens(glob)
    for index, tokens in enumerate(segments):
        last = index == len(segments) - 1
        if tokens is not None:
            state = _segment(nfa, state if joined else nfa.step(state, None), tokens)
            joined = False
        elif last:  # a trailing ** is one or more segments
            first = nfa.run(state if joined else nfa.step(state, None))
            nfa.edges[nfa.step(first, None)].append((ANY, first))
            state = first
        else:  # elsewhere, zero or more whole segments, each followed by '/'
            loop = nfa.new()
            nfa.eps[state if joined else nfa.step(state, None)].append(loop)
            nfa.edges[nfa.run(loop)].append((None, loop))
            state, joined = loop, True
    return nfa.seal(state)


def _closure(nfa: _Nfa, state: int) -> frozenset[int]:
    seen, stack = {state}, [state]
    while stack:
        for nxt in nfa.eps[stack.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return frozenset(seen)


def _passes(pred: Pred, char: str) -> bool:
    if pred is None:
        return char == "/"
    return char != "/" and (char in pred[0]) != pred[1]


# "A real path": segments not empty, ".", or "..". States: segment start, ".", "..", other.
_SEGMENT_START, _ONE_DOT, _TWO_DOTS, _REAL_SEGMENT = 0, 1, 2, 3


def _real(state: int, char: str) -> int | None:
    if char == "/":
        return _SEGMENT_START if state == _REAL_SEGMENT else None
    if char == "." and state < _TWO_DOTS:
        return state + 1
    return _REAL_SEGMENT


def _stand_ins() -> Iterator[str]:
    """Characters to stand for "any character no glob names": plain ones first, then an endless supply."""
    yield from "zqjkw0123456789xyv_~+@%="
    yield from map(chr, count(0xC0))  # a class names only [A-Za-z0-9._-] and a glob is short: one is free


def _alphabet(a: str, b: str) -> tuple[str, ...]:
    """One character per class of characters the two globs cannot tell apart."""
    named = {
        c for glob in (a, b) for tokens in glob_tokens(glob) if tokens for pred, _ in tokens if pred for c in pred[0]
    }
    other = next(c for c in _stand_ins() if c not in named and c not in "/.")
    return tuple(sorted(named | {"/", ".", other}))


Node = tuple[int, int, int]  # (state of the first glob, of the second, of the real-path check)


class _Search:
    """One overlap search: the two automata, the characters that matter, and what it may spend."""

    def __init__(self, pair: tuple[_Nfa, _Nfa], alphabet: tuple[str, ...], budget: Budget) -> None:
        self.pair = pair
        self.alphabet = alphabet
        self.budget = budget
        self.both: dict[tuple[Pred, Pred], tuple[str, ...]] = {}

    def chars(self, pa: Pred, pb: Pred) -> tuple[str, ...]:
        """Characters both tests accept (remembered: the same pairs recur at every step)."""
        if (pa, pb) not in self.both:
            self.both[pa, pb] = tuple(c for c in self.alphabet if _passes(pa, c) and _passes(pb, c))
        return self.both[pa, pb]

    def moves(self, node: Node) -> Iterator[tuple[str, Node]]:
        a, b, real = node
        for pa, na in self.pair[0].moves[a]:
            self.budget.spend(len(self.pair[1].moves[b]))
            for pb, nb in self.pair[1].moves[b]:
                for char in self.chars(pa, pb):
                    if (nr := _real(real, char)) is not None:
                        yield char, (na, nb, nr)


def overlap(a: str, b: str, budget: Budget | None = None) -> str | None:
    """The shortest path both globs match, or None when no path can."""
    a, b = sorted((a, b))
    if _literal_split(a, b):
        return None
    search = _Search((_automaton(a), _automaton(b)), _alphabet(a, b), budget or Budget())
    finals = (search.pair[0].finals, search.pair[1].finals)
    start: Node = (0, 0, 0)
    parents: dict[Node, tuple[Node, str] | None] = {start: None}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        if node[2] == _REAL_SEGMENT and node[0] in finals[0] and node[1] in finals[1]:
            return _path(parents, node)
        for char, nxt in search.moves(node):
            if nxt not in parents:
                parents[nxt] = (node, char)
                queue.append(nxt)
    return None


def _path(parents: dict[Node, tuple[Node, str] | None], node: Node) -> str:
    chars: list[str] = []
    while (link := parents[node]) is not None:
        node, char = link
        chars.append(char)
    return "".join(reversed(chars))


def _literal_split(a: str, b: str) -> bool:
    """Globs whose first, or last, plain segments differ share no path (the common, cheap case)."""
    first, second = a.split("/"), b.split("/")
    return _plain_differ(first, second) or _plain_differ(first[::-1], second[::-1])


def _plain_differ(first: list[str], second: list[str]) -> bool:
    for left, right in zip(first, second, strict=False):
        if left == "**" or right == "**" or any(c in left + right for c in "*?["):
            return False
        if left != right:
            return True
    return False

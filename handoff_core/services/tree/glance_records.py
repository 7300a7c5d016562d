"""A split walk's glances as plain values, both ways: what the child sends, what the server takes.

The child side (``serve_half``) is what ``halves`` starts in a second interpreter: it loads no more
than a glance needs (no logging, no subprocess), so that it starts sooner.
"""

from __future__ import annotations

import gc
import io
import marshal
import sys
from collections.abc import Callable
from functools import partial
from typing import Final

from handoff_core.contract.change import ChangeFacts
from handoff_core.contract.ids import Ref
from handoff_core.files.sightings import Sighting, sight_rounds
from handoff_core.services.tree.status import TaskStatus, glance_sighted

__all__ = ["Glance", "decoded", "serve_half"]

_WIDTH: Final = len(TaskStatus._fields) + 2  # a glance's fields, its stamps and its entry names

Glance = tuple[TaskStatus, bytes | None, tuple[str, ...]]  # a status, the stamps and names it is held on


def decoded(payload: bytes, change: str, there: list[str]) -> list[tuple[str, list[Glance] | None]]:
    """The child's answer as glances, each checked to be of the round it is filed under.

    One value per round, read one at a time: what is alive at once is the payload, the glances and
    one round's records, never every record beside every glance."""
    stream = io.BytesIO(payload)
    rounds = []
    for asked in there:
        # Written by the child this process started, on a pipe only the two of them hold; values only.
        name, found = marshal.load(stream)  # noqa: S302
        if name != asked:
            raise ValueError(f"round {name!r} where {asked!r} was asked for")
        rounds.append((name, None if found is None else [_glance(record, change, name) for record in found]))
    if stream.read(1):
        raise ValueError("more than the rounds asked for")
    return rounds


def _glance(record: tuple[object, ...], change: str, session: str) -> Glance:
    if type(record) is not tuple or len(record) != _WIDTH:
        raise ValueError("not a glance")
    ref = Ref._make(record[0])  # type: ignore[arg-type]
    if ref.change != change or ref.session != session or type(ref.task) is not str or record[-1].__class__ is not tuple:
        raise ValueError(f"a glance filed under the wrong round: {ref}")
    # A round trip of a status the child built by keyword (``glance_sighted``), field for field.
    status = TaskStatus._make((ref, *record[1:-2]))
    return status, record[-2], record[-1]  # type: ignore[return-value]


def serve_half() -> None:
    """The child's side: glance the rounds asked for on standard input, write them to standard output."""
    gc.disable()  # a short life: its exit frees everything, and a collection would only walk the glances
    sessions_fd, facts, before_ns, rounds = marshal.load(sys.stdin.buffer)  # noqa: S302  # from the server that started it
    facts = ChangeFacts(*facts)
    look = partial(_record, {})
    for name in rounds:
        sys.stdout.buffer.write(marshal.dumps((name, _glanced(sessions_fd, name, facts, before_ns, look))))
    sys.stdout.buffer.flush()


def _glanced(
    sessions_fd: int,
    name: str,
    facts: ChangeFacts,
    before_ns: int,
    look: Callable[[str, str, Sighting], list[object] | None],
) -> list[tuple[object, ...]] | None:
    """A round's glances as plain values; None when one of its tasks needs the full read."""
    records = []
    for seen in sight_rounds(sessions_fd, [name], facts, before_ns, look):
        if isinstance(seen, list):
            records.append(tuple(seen))
        else:
            return None
    return records


def _record(
    shared: dict[tuple[str, ...], tuple[str, ...]], session: str, task: str, seen: Sighting
) -> list[object] | None:
    """A glance as plain values; equal entry-name tuples are one object (``marshal`` writes it once)."""
    assert seen.facts is not None
    status = glance_sighted(seen.facts.change, session, task, seen)
    if status is None:
        return None
    stamps, names = seen.probe if seen.probe is not None else (None, ())
    return [tuple(status.ref), *status[1:], stamps, shared.setdefault(names, names)]

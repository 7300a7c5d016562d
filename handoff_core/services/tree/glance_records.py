"""A split walk's glances as plain values, both ways: what the child sends, what the server takes.

The child side (``serve_half``) is what ``halves`` starts in a second interpreter: it loads no more
than a glance needs (no logging, no subprocess), so that it starts sooner.
"""

from __future__ import annotations

import gc
import marshal
import struct
import sys
from collections.abc import Callable
from functools import partial
from typing import Any, BinaryIO, Final, cast

from handoff_core.contract.change import ChangeFacts
from handoff_core.contract.ids import Ref, task_number
from handoff_core.contract.validate import LATE_REPORT
from handoff_core.files.sightings import Sighting, sight_rounds
from handoff_core.layout import KINDS, REPORT_STATUSES
from handoff_core.services.tree.status import TaskStatus, glance_sighted

__all__ = ["Glance", "decoded", "framed", "serve_half"]

_FRAME: Final = struct.Struct("<I")  # a round's value's length, before it
_WIDTH: Final = len(TaskStatus._fields) + 2  # the task's name, the other fields, its stamps and its entry names

Glance = tuple[TaskStatus, bytes | None, tuple[str, ...]]  # a status, the stamps and names it is held on


def decoded(answer: BinaryIO, change: str, there: list[str]) -> list[tuple[str, list[Glance] | None]]:
    """The child's answer as glances, each checked to be of the round it is filed under.

    One value per round, each framed by its length and read one at a time: what is alive at once is
    the glances and one round's records, never the whole answer beside its values."""
    rounds = []
    seen_names: set[object] = set()
    for asked in there:
        head = answer.read(_FRAME.size)
        size = _FRAME.unpack(head)[0] if len(head) == _FRAME.size else -1
        blob = answer.read(size) if size >= 0 else b""
        if len(blob) != size:
            raise ValueError("an answer cut short")
        # Written by the child this process started, to a file only the two of them hold; values only.
        name, found = marshal.loads(blob)  # noqa: S302
        if name != asked:
            raise ValueError(f"round {name!r} where {asked!r} was asked for")
        seen: set[str] = set()
        glance = partial(_glance, change=change, session=name, seen=seen, seen_names=seen_names)
        rounds.append((name, None if found is None else [glance(record) for record in found]))
    if answer.read(1):
        raise ValueError("more than the rounds asked for")
    return rounds


# What a glance can hold (``status._glanced``): a record holding anything else is no glance.
_SAYS = {
    (kind, state, report, notes)
    for kind in KINDS
    for state, reports in (("dispatched", (None,)), ("released", (None,)), ("returned", REPORT_STATUSES))
    for report in reports
    for notes in ((), (LATE_REPORT,))
}
_UNSAID = (None, (), None, "", False, False)  # scope, problems, proof, held_because, judged, original


def _glance(record: tuple[object, ...], change: str, session: str, seen: set[str], seen_names: set[object]) -> Glance:
    """A glance from its record: the task's name, the status's other fields, its stamps and names."""
    if type(record) is not tuple or len(record) != _WIDTH:
        raise ValueError("not a glance")
    task, kind, state, report, scope, locator, temp, problems, outstanding, notes, proof = record[:11]
    dispatched, released, closed, held, judged, original, stamps, names = record[11:]
    if (
        (kind, state, report, notes) not in _SAYS
        or (scope, problems, proof, held, judged, original) != _UNSAID
        or type(task) is not str
        or task_number(task) is None
        or task in seen
        or not (type(locator) is type(outstanding) is bool and type(dispatched) is float)
        or not (released is None or type(released) is float)
        or not (closed is None or type(closed) is float)
        or not (stamps is None or type(stamps) is bytes)
        or not (temp == () or (type(temp) is tuple and all(type(n) is str for n in temp)))
        or not (names in seen_names or _names(names, seen_names))
    ):
        raise ValueError(f"not a glance of a task: {task!r}")
    seen.add(task)
    # A round trip of a status the child built by keyword (``glance_sighted``), field for field; its
    # change and round are those this process asked for (the child names only the task).
    status = TaskStatus._make((Ref(change, session, task), *record[1:-2]))
    return status, stamps, cast("tuple[str, ...]", names)  # checked above (``_names``)


def framed(value: Any) -> bytes:  # marshal's own kinds of value
    """One round's value as the child writes it: its length, then ``marshal``'s bytes."""
    blob = marshal.dumps(value)
    return _FRAME.pack(len(blob)) + blob


def _names(names: object, seen_names: set[object]) -> bool:
    """Whether ``names`` is a tuple of names (remembered: most tasks share a few such tuples)."""
    if type(names) is tuple and all(type(n) is str for n in names):
        seen_names.add(names)
        return True
    return False


def serve_half() -> None:
    """The child's side: glance the rounds asked for on standard input, write them to standard output."""
    gc.disable()  # a short life: its exit frees everything, and a collection would only walk the glances
    sessions_fd, facts, before_ns, rounds = marshal.load(sys.stdin.buffer)  # noqa: S302  # from the server that started it
    facts = ChangeFacts(*facts)
    look = partial(_record, {})
    for name in rounds:  # standard output is a file (``files.interpreter``): a write never waits on the server
        sys.stdout.buffer.write(framed((name, _glanced(sessions_fd, name, facts, before_ns, look))))
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
    return [task, *status[1:], stamps, shared.setdefault(names, names)]

"""A glance survives the trip from the child as plain values; anything else is refused whole."""

from __future__ import annotations

import io
import marshal
from functools import partial

import pytest

from handoff_core.files.sightings import Sighting, opened_sessions, sight_rounds
from handoff_core.services.tree.glance_records import _record, decoded, framed
from handoff_core.services.tree.status import glance_sighted
from handoff_core.services.writing.store import Store
from tests.support.glances import history, old_times


def records_of(store: Store) -> tuple[str, str, list[object]]:
    """The change, its one round, and that round's records as the child makes them."""
    (round_dir,) = store.roots.state_root.glob("specdev/changes/*/sessions/*")
    change = round_dir.parent.parent.name
    with opened_sessions(store.roots.state_root, change) as (facts, sessions_fd):
        assert sessions_fd is not None
        seen = list(sight_rounds(sessions_fd, [round_dir.name], facts, 2**62, partial(_record, {})))
    return change, round_dir.name, [tuple(r) for r in seen if isinstance(r, list)]


def test_a_glance_decodes_to_the_status_and_probe_the_child_glanced(store: Store) -> None:
    history(store)
    old_times(store)
    change, session, records = records_of(store)
    assert len(records) > 10
    (got,) = decoded(io.BytesIO(framed((session, records))), change, [session])
    assert got[0] == session
    assert got[1] is not None
    sightings: dict[str, Sighting] = {}
    with opened_sessions(store.roots.state_root, change) as (facts, fd):
        assert fd is not None
        list(sight_rounds(fd, [session], facts, 2**62, lambda r, t, s: sightings.setdefault(t, s)))
    for status, stamps, names in got[1]:
        sighting = sightings[status.ref.task]
        assert status == glance_sighted(change, session, status.ref.task, sighting)
        assert (stamps, names) == sighting.probe


ROUND, CHANGE = "20261130T000000Z", "2026-11-30-demo"
# A record as the child sends a returned review's glance: task, the status's other fields, stamps, names.
GLANCE = (
    *("001-a", "review", "returned", "completed", None, False, (), (), False, (), None, 1.0, None, 2.0),
    *("", False, False, b"s", ("REPORT.md", "TASK.md")),
)
# Per field of GLANCE, values no glance holds there.
ODD: dict[int, tuple[object, ...]] = {
    **{0: ("a-task", 7), 1: ("kind", None), 2: ("weird", "invalid"), 3: ("done",), 4: ("scope",), 5: (1,)},
    **{6: (["a"], (1,)), 7: (("a problem",),), 8: (1, None), 9: (("note",),), 10: ("proof",), 11: (1, None)},
    **{12: ("1.0",), 13: (2,), 14: ("held",), 15: (True,), 16: (True,), 17: ("stamps",), 18: (["TASK.md"], (1,))},
}


def odd_records() -> list[tuple[object, ...]]:
    """The glance above, one field at a time made what no glance holds."""
    return [(*GLANCE[:index], value, *GLANCE[index + 1 :]) for index, values in ODD.items() for value in values]


def test_the_record_the_odd_ones_are_made_from_is_a_glance() -> None:
    (got,) = decoded(io.BytesIO(framed((ROUND, [GLANCE]))), CHANGE, [ROUND])
    assert got[1] is not None
    ((status, stamps, names),) = got[1]
    assert (status.ref.task, status.state, status.report_status) == ("001-a", "returned", "completed")
    assert (stamps, names) == (b"s", GLANCE[-1])


@pytest.mark.parametrize(
    "payload",
    [
        b"",
        b"nonsense",
        marshal.dumps((ROUND, [])),  # not framed
        framed((ROUND, []))[:-1],  # cut short
        framed((ROUND, [])) + b"x",  # more than asked
        framed({"a": 1}),
        framed(("another-round", [])),
        framed((ROUND, [])) + framed((ROUND, [])),
        framed((ROUND, [("not", "a", "glance")])),
        framed((ROUND, [(("001-a",), *[None] * 17, ())])),
        framed((ROUND, [("001-a", *[None] * 17, "not names")])),
        framed((ROUND, [("001-a", *[None] * 16, "not stamps", ())])),
        framed((ROUND, [("001-a", *[None] * 17)])),
        *(framed((ROUND, [record])) for record in odd_records()),
        framed((ROUND, [GLANCE, GLANCE])),  # one task twice
    ],
)
def test_an_answer_that_is_not_glances_of_the_rounds_asked_is_refused(payload: bytes) -> None:
    with pytest.raises((ValueError, TypeError, EOFError)):
        decoded(io.BytesIO(payload), CHANGE, [ROUND])

"""One page of a status reply: counts for the whole selection, then the tasks a view asks for, cut
to a byte budget, with a cursor to the rest.

A view is ``needs_lead`` (outstanding, with problems or notes, or closed within
``RECENT_ARRIVAL_SECONDS``), ``all``, ``outstanding``, or one state. A cursor is ``<view>|<change/session/task>`` of
the last task shown and is passed back in place of the view: the next page starts after that
task, so paging a view returns each of its tasks exactly once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from operator import attrgetter

from handoff_core.contract.ids import Ref, parse_ref
from handoff_core.errors import HandoffError, InvalidInput
from handoff_core.layout import RECENT_ARRIVAL_SECONDS, STATUS_PAGE_BYTES, STATUS_VIEWS, StatusView
from handoff_core.services.tree.status import TaskStatus, state_label

__all__ = ["StatusPage", "changed_since", "needs_lead", "page_status"]

_Place = tuple[str, str, str]
_REF, _JUDGED = attrgetter("ref"), attrgetter("judged")
_LABELLED = attrgetter("state", "report_status", "original")  # what ``TaskStatus.label`` reads


@dataclass(frozen=True)
class StatusPage:
    tasks: list[TaskStatus]
    counts: dict[str, int]  # by label (``returned:completed``), over every task asked about
    next_cursor: str  # empty on the last page
    unjudged: int = 0  # of the tasks counted, how many were glanced and not yet validated


def needs_lead(status: TaskStatus, now: float) -> bool:
    recent = status.closed_at is not None and now - status.closed_at < RECENT_ARRIVAL_SECONDS
    return status.outstanding or recent or bool(status.problems or status.notes or status.temp_files)


def changed_since(tasks: list[TaskStatus], since: str) -> list[TaskStatus]:
    """The tasks whose TASK, REPORT or RELEASE appeared at or after ``since`` (ISO 8601 with a zone)."""
    try:
        instant = datetime.fromisoformat(since.strip())
    except ValueError:
        instant = None
    if instant is None or instant.tzinfo is None:
        raise InvalidInput(f"since={since!r} is not an ISO 8601 time with a zone: give e.g. 2026-12-01T09:00:00Z")
    cut = instant.timestamp()
    return [t for t in tasks if max(t.dispatched_at, t.released_at or 0.0, t.closed_at or 0.0) >= cut]


def _read_view(view: str) -> tuple[StatusView, _Place | None]:
    """A view name, or a cursor: the view it pages and the task it stopped after."""
    named, bar, ref = view.partition("|")
    if named not in STATUS_VIEWS:
        raise InvalidInput(f"view {view!r} is unknown: pass one of {', '.join(STATUS_VIEWS)}, or a next_cursor")
    if not bar:
        return named, None
    try:
        after = parse_ref(ref)
    except HandoffError:
        raise InvalidInput(f"cursor {view!r} is not one handoff_status returned: start again from a view") from None
    return named, (after.change, after.session, after.task)


def _in_view(status: TaskStatus, view: StatusView, now: float) -> bool:
    if view == "needs_lead":
        return needs_lead(status, now)
    if view == "outstanding":  # what must end before its change is archived (``archiving``)
        return status.outstanding
    return view in ("all", status.state)


def page_status(
    tasks: list[TaskStatus],
    view: str,
    *,
    now: float,
    size: Callable[[TaskStatus], int],
    budget: int = STATUS_PAGE_BYTES,
    judge: Callable[[TaskStatus], TaskStatus] | None = None,
) -> StatusPage:
    """The page of ``tasks`` that ``view`` (a view or a cursor) selects; ``size`` is a task's bytes as sent.

    ``judge`` gives a glanced task (``judged`` False) in full: each task is judged before it is
    placed in or out of the view, up to the first that no longer fits, so the page is the one a
    fully judged answer has; the counts take the rest as glanced (``unjudged`` says how many).
    """
    named, after = _read_view(view)
    rows = sorted(tasks, key=_REF)  # a ``Ref`` is the tuple (change, session, task): in place order
    if after is not None:
        rows = [t for t in rows if t.ref > after]
    judged: dict[Ref, TaskStatus] = {}
    shown: list[TaskStatus] = []
    used, more = 0, False
    for row in rows:
        status = row if row.judged or judge is None else judged.setdefault(row.ref, judge(row))
        if not _in_view(status, named, now):
            continue
        used += size(status)
        if shown and used > budget:
            more = True
            break
        shown.append(status)
    counted = [judged.get(t.ref, t) for t in tasks]
    counts: dict[str, int] = {}
    for key, count in Counter(map(_LABELLED, counted)).items():  # a label per state, not per task
        label = state_label(*key)
        counts[label] = counts.get(label, 0) + count
    unjudged = len(counted) - sum(map(_JUDGED, counted))
    return StatusPage(shown, counts, f"{named}|{shown[-1].ref}" if more else "", unjudged)

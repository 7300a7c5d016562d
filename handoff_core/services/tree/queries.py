"""The read side of one state root: tasks, files, arrivals, validation, status and writer claims.

Nothing here writes. Every read walks the tree by handle (``files``); OS errors leave as
``StorageError``.
"""

from __future__ import annotations

import gc
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from functools import partial
from typing import TYPE_CHECKING

from handoff_core.contract.anchor import TaskAnchor
from handoff_core.contract.change import ChangeFacts
from handoff_core.contract.ids import Ref, check_change, check_round, is_change_id
from handoff_core.contract.snapshot import TaskSnapshot
from handoff_core.contract.validate import ValidationResult, check_handoff
from handoff_core.errors import ChangeNotFound, HandoffError
from handoff_core.files.leftovers import Leftover, find_leftovers
from handoff_core.files.reader import read_change_snapshots, read_snapshot, round_names
from handoff_core.files.sightings import opened_sessions, sight_rounds
from handoff_core.files.task_dir import Roots, translated
from handoff_core.layout import CHANGES
from handoff_core.services.rules.ownership import Claim
from handoff_core.services.tree.arrivals import Arrivals
from handoff_core.services.tree.claim_rows import SETTLED_NS, ClaimRows
from handoff_core.services.tree.claims import ClaimIndex, change_hold, unreadable_because, unreadable_change
from handoff_core.services.tree.judging import PACE_EVERY, PACE_SECONDS, Judging
from handoff_core.services.tree.status import TaskStatus, named_since, task_status, with_writers_since
from handoff_core.services.tree.status_rows import StatusRows
from handoff_core.services.tree.task_files import TaskFiles
from handoff_core.services.tree.verdicts import Verdicts

if TYPE_CHECKING:
    from handoff_core.files.reader import Reuse

__all__ = ["Queries", "held_status"]


def held_status(change: str, because: str) -> TaskStatus:
    """A change that cannot be read, as status shows it: one invalid row holding the whole workspace."""
    hold = change_hold(change, because)
    return TaskStatus(
        ref=hold.ref,
        kind=None,
        state="invalid",
        report_status=None,
        scope=None,
        has_locator=False,
        temp_files=(),
        problems=(because,),
        outstanding=True,
        held_because=because,
    )


logger = logging.getLogger(__name__)


class _CollectorPause:
    """The cyclic garbage collector paused for one walk.

    A walk makes an object or two per task that lives as long as the server (held verdicts, the
    claim index); none of them can form a cycle, so the collector finds nothing, yet it walks every
    one of them again each time enough new ones pile up: a third of a fresh walk's time at 100,000
    tasks. Reference counting still frees everything at once. Walks overlap (an answer, the judging
    and the rows read ahead run on threads of their own): the collector resumes when the last of
    them ends, and only when a walk paused it.
    """

    def __init__(self) -> None:
        self._walks = 0
        self._lock = threading.Lock()

    @contextmanager
    def during(self) -> Iterator[None]:
        with self._lock:
            ours = self._walks > 0 or gc.isenabled()
            if ours:
                gc.disable()
                self._walks += 1
        try:
            yield
        finally:
            if ours:
                with self._lock:
                    self._walks -= 1
                    if not self._walks:
                        gc.enable()


_no_cycle_collection = _CollectorPause().during


class Queries(TaskFiles):
    def __init__(self, roots: Roots, verdicts: Verdicts | None = None) -> None:
        super().__init__(roots)
        self._claims = ClaimIndex()
        self._verdicts = verdicts if verdicts is not None else Verdicts()
        self._arrivals = Arrivals(roots.state_root)
        self._judging = Judging()  # of what a glancing walk left (``status``)
        self._anchor_of: Callable[[], TaskAnchor | None] | None = None
        self._anchor: TaskAnchor | None = None
        self._rows: StatusRows | None = None  # a server's: the verdicts kept in this user's cache

    def keep_claim_rows(self, settle_ns: int = SETTLED_NS) -> None:
        """Answer claims from rows per round kept in this user's cache (``claim_rows``) rather than a stat
        per task: for a server, which answers many dispatches. A fresh process scans every task."""
        self._claims = ClaimRows(settle_ns=settle_ns)
        self._rows = StatusRows(self.roots.state_root)

    def read_rows(self) -> None:
        """Read the status rows the server before this one kept, ahead of the first answer (a server
        just started, on a thread of its own): the first walk waits for it and takes them."""
        if self._rows is not None:
            with _no_cycle_collection():
                self._rows.read(self._verdicts.shared)

    def save_claim_rows(self) -> None:
        """Keep the claim rows in the cache now (a server about to stop); nothing for a fresh scan."""
        if isinstance(self._claims, ClaimRows):
            self._claims.save(self.roots.state_root)

    def use_anchor(self, anchor_of: Callable[[], TaskAnchor | None]) -> None:
        """Judge every TASK against the Lead's anchor (``contract.anchor``), got from ``anchor_of`` on first
        need; its failure to load is every read's refusal, never a read without it."""
        self._anchor_of = anchor_of

    @property
    def anchor(self) -> TaskAnchor | None:
        """The Lead's anchor this reader judges by, or None for a reader of the files alone. While the
        Lead's secret does not govern the state root, each call asks again (one lstat): once it does,
        every TASK that does not verify is changed, and what was judged before is judged again
        (``ClaimIndex`` and ``Verdicts`` each see the anchor change)."""
        anchor = self._anchor
        if anchor is None and self._anchor_of is not None:
            anchor = self._anchor = self._anchor_of()
        if anchor is not None and not anchor.governed and anchor.governs():
            anchor = self._anchor = anchor._replace(governed=True)
        return anchor

    @property
    def held_verdicts(self) -> int:
        """How many task directories a warm status would not read again (for the benchmark)."""
        return len(self._verdicts)

    @translated
    def arrivals(self, refs: list[Ref]) -> dict[Ref, str]:
        """Which of ``refs`` have a REPORT.md (or else a RELEASE.md) that ends their claim now.

        An entry under that name that ends nothing (an empty file, a FIFO, a dangling link, another
        task's text) is no arrival: waiting on it would hand the Lead a report that is not there.
        """
        return self._arrivals.of(refs)

    def snapshot(self, ref: Ref) -> TaskSnapshot:
        return read_snapshot(self.roots.state_root, ref.change, ref.session, ref.task)

    def validate(self, ref: Ref, stage: str) -> ValidationResult:
        return check_handoff(lambda: self.snapshot(ref), stage, ref.change, ref.session, ref.task, self.anchor)

    def changes(self) -> list[str]:
        """Ids of the active changes (entries under specdev/changes with a valid id)."""
        folder = self.roots.state_root.joinpath(*CHANGES)
        try:  # a symlink is listed too: it cannot be walked, so it holds the workspace until it is fixed
            return sorted(n for n in os.listdir(folder) if is_change_id(n))
        except FileNotFoundError:
            return []

    @translated
    def status(
        self, change: str | None = None, session: str | None = None, *, glancing: bool = False
    ) -> list[TaskStatus]:
        """Every task's derived state, for one change (and round) or all active changes.

        ``glancing``: settled tasks with no held verdict may be glanced (``status.glance``: counted,
        not yet validated; ``judged`` False). ``judged`` gives one in full at once; ``judge_later``
        judges the rest once the answer is made, so that a later answer holds their verdicts.
        """
        if session is not None:
            check_round(session)
        with self.answering():
            return with_writers_since(self._walk(change, session, glancing=glancing))

    def answering(self) -> AbstractContextManager[None]:
        """Mark an answer in the making: the background judging pauses until none is (``judging``)."""
        return self._judging.answering()

    def judge_later(self, tasks: list[TaskStatus], change: str | None, session: str | None) -> None:
        """Judge in full, on one thread at a time, what a glancing walk of ``change`` (and
        ``session``) left unjudged in ``tasks``, once no answer is being made (``judging``)."""
        if not all(status.judged for status in tasks):
            self._judging.later(partial(self._judge_rest, change, session))

    def _judge_rest(self, change: str | None, session: str | None) -> None:
        try:
            self._walk(change, session, paced=True)
            self._verdicts.forget_glances()
        except (HandoffError, OSError) as exc:  # the tree moved under the walk: the next answer glances again
            logger.warning("judging %s in the background stopped: %s", change or "the active changes", exc)

    def wait_judged(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the background judging; whether it is done."""
        return self._judging.wait(timeout)

    def _walk(
        self, change: str | None, session: str | None, *, glancing: bool = False, paced: bool = False
    ) -> list[TaskStatus]:
        anchor = self.anchor
        with _no_cycle_collection():
            if self._rows is not None:
                self._rows.load(self._verdicts, anchor)
            began = time.time_ns()
            found = [
                status
                for name in self._named(change)
                for status in self._change_status(name, session, began, glancing=glancing, paced=paced, anchor=anchor)
            ]
            if change is None and session is None and not glancing:  # a lookup per task: not in the Lead's answer
                self._verdicts.forget_unseen(found)
                if self._rows is not None:
                    self._rows.save(self._verdicts, self.anchor)
            return found

    def judged(self, status: TaskStatus, among: list[TaskStatus]) -> TaskStatus:
        """``status`` judged in full (read afresh when it is a glance); ``among`` is the answer it is part of."""
        with self.page_judge(among) as judge:
            return judge(status)

    @contextmanager
    def page_judge(self, among: list[TaskStatus]) -> Iterator[Callable[[TaskStatus], TaskStatus]]:
        """``judged`` for the tasks of one page of ``among``, each read afresh from its files."""
        anchor = self.anchor

        def judge(status: TaskStatus) -> TaskStatus:
            if status.judged:
                return status
            with self.answering():
                return named_since(task_status(status.ref, self.snapshot(status.ref), anchor), among)

        yield judge

    def _named(self, change: str | None) -> list[str]:
        return [check_change(change)] if change else self.changes()

    def _change_status(
        self,
        change: str,
        session: str | None,
        began: int,
        *,
        glancing: bool,
        paced: bool,
        anchor: TaskAnchor | None,
    ) -> list[TaskStatus]:
        """The change's tasks; a change that cannot be read is first shown as the hold it is (see ``claims``)."""
        held = unreadable_change(self.roots.state_root, change)
        hold = [held_status(change, held)] if held else []
        # Held verdicts: the walk is mostly stat calls. A glance is mostly Python: threads would
        # only contend with it for the GIL.
        readers = 0 if self._verdicts.expects_reuse or glancing or paced else 2
        found: list[TaskStatus] = []
        try:
            # Cold (nothing held to reuse), or judged only in part while the background judging runs:
            # the lean walk, so that the answers after the first cost no more than the first. What is
            # judged so far is reused there (a stat per file), never glanced again: an answer made
            # during the judging then holds no second copy of the tasks beside the verdicts.
            if glancing and (not self._verdicts.expects_reuse or self._judging.elsewhere()):
                return hold + self._sighted(change, session, began, anchor)
            walk = read_change_snapshots(self.roots.state_root, change, session, reuse=self._verdicts, readers=readers)
            for index, (r, t, snapshot) in enumerate(walk):
                place = (change, r, t)
                found.append(
                    self._verdicts.judge(place, snapshot, began, self.snapshot, glancing=glancing, anchor=anchor)
                )
                if paced and not snapshot.reused and index % PACE_EVERY == 0:
                    # Judging in the background holds the GIL in long runs of Python: a short sleep now
                    # and then lets the threads that answer (and the event loop that sends) run at once,
                    # and while an answer is being made it waits for it to end.
                    time.sleep(PACE_SECONDS)
                    self._judging.yield_to_answers()
        except ChangeNotFound:
            raise
        except HandoffError as exc:  # a round that is a symlink, say: the change holds the workspace (``claims``)
            return hold or [held_status(change, unreadable_because(change, exc.message))]
        return hold + found

    def _sighted(self, change: str, session: str | None, began: int, anchor: TaskAnchor | None) -> list[TaskStatus]:
        """A cold walk of the change: each settled task glanced from its sighting
        (``files.sightings``) unless its held verdict is still true, the rest judged in full at once
        (and held)."""
        before = began - self._verdicts.settle_ns
        reuse = self._verdicts.glimpses if self._verdicts.glimpses else None
        with opened_sessions(self.roots.state_root, change) as (facts, sessions_fd):
            if sessions_fd is None:
                return []
            rounds = round_names(sessions_fd, session)
            return self._sight(sessions_fd, facts, before, reuse, began, anchor, rounds)

    def _sight(
        self,
        sessions_fd: int,
        facts: ChangeFacts,
        before: int,
        reuse: Reuse | None,
        began: int,
        anchor: TaskAnchor | None,
        rounds: list[str],
    ) -> list[TaskStatus]:
        look = partial(self._verdicts.glanced, facts.change)
        found = []
        for seen in sight_rounds(sessions_fd, rounds, facts, before, look, reuse):
            if isinstance(seen, TaskStatus):
                found.append(seen)
            else:
                r, t, snapshot = seen
                # Reused: a held verdict, or a held glance (taken for the glance it is); else judged at once.
                found.append(
                    self._verdicts.judge(
                        (facts.change, r, t), snapshot, began, self.snapshot, glancing=snapshot.reused, anchor=anchor
                    )
                )
        return found

    def claims(self) -> list[Claim]:
        """Writer claims of every outstanding implementation task under the state root; with the Lead's
        anchor, each rests on its TASK as published (one that does not verify holds the whole workspace)."""
        anchor = self.anchor
        with _no_cycle_collection():
            return self._claims.claims(self.roots.state_root, self.changes(), anchor)

    @translated
    def leftovers(self) -> list[Leftover]:
        """Publish temp files and empty rounds that crashed or refused work left behind."""
        return find_leftovers(self.roots.state_root)

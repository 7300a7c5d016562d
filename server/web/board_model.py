"""What the board shows, kept in memory and updated task by task as the tree changes.

The whole tree is judged once when the board starts; after that a file event re-reads only the
task it touched, so a page at 10,000 tasks is served from memory. Texts from the tree (REPORT
content above all) are data for the page to show as text, never markup: the page sets
``textContent`` only, and its Content-Security-Policy allows no inline script.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from handoff_core.contract.ids import Ref, ref_in
from handoff_core.contract.values import visible
from handoff_core.errors import HandoffError
from handoff_core.layout import HEADING_MEANINGS
from handoff_core.services.evidence.audit import task_verdict
from handoff_core.services.rules.ownership import writer_slots
from handoff_core.services.tree import report_view
from handoff_core.services.tree.queries import Queries
from handoff_core.services.tree.status import TaskStatus, task_status
from handoff_core.services.views.status_view import (
    NOT_AUDITED,
    AuditBudget,
    TaskFacts,
    attention_of,
    auditable,
    task_facts,
    verification_of,
)

logger = logging.getLogger(__name__)

__all__ = ["PAGE", "BoardModel", "ref_of_path"]

PAGE = 200  # tasks per page of one change


def ref_of_path(state_root: Path, path: Path) -> Ref | None:
    """The task a changed path belongs to, or None for anything else in the tree."""
    try:
        return ref_in(path.relative_to(state_root).parts)
    except ValueError:
        return None


def _row(facts: TaskFacts) -> dict[str, Any]:
    return {
        "ref": str(facts.ref),
        "kind": facts.kind or "?",
        "state": facts.state,
        "age_seconds": facts.age_seconds,
        "returned_seconds": facts.closed_seconds,
        "workspace": facts.workspace,
        "writable": list(facts.writable),
        "claim": facts.claim,
        "link": facts.link,
        "has_locator": facts.has_locator,
        "proof": facts.proof,
        "audit": facts.audit,
        "verification": facts.verification,
        "problems": [visible(problem) for problem in facts.problems],
        "attention": visible(facts.attention),
    }


@dataclass
class BoardModel:
    queries: Queries
    writer_cap: int
    version: int = 0
    tasks: dict[str, tuple[TaskStatus, float]] = field(default_factory=dict)  # ref -> (status, judged at)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        # ref -> the last audit verdict of a returned worktree task: a folded change shows what its pages
        # found, and each summary audits at most MAX_AUDITS more; a file event drops its task's verdict.
        self.audits: dict[str, str] = {}

    def load(self) -> None:
        """Judge every task of every active change (once, at start)."""
        now = time.time()
        found = {str(status.ref): (status, now) for status in self.queries.status()}
        with self._lock:
            self.tasks = found
            self.version += 1

    def refresh(self, refs: set[Ref]) -> None:
        """Judge again the tasks a file event touched; a task that is gone leaves the board."""
        for ref in refs:
            snapshot = self.queries.snapshot(ref)
            with self._lock:
                self.audits.pop(str(ref), None)
                if snapshot.task_found:
                    self.tasks[str(ref)] = (task_status(ref, snapshot), time.time())
                else:
                    self.tasks.pop(str(ref), None)
        with self._lock:
            self.version += 1

    def summary(self) -> dict[str, Any]:
        with self._lock:
            tasks = [status for status, _ in self.tasks.values()]
            version = self.version
        claims = [t for t in tasks if t.claims_writer]
        ordered = sorted(tasks, key=lambda t: (t.ref.change, t.ref.session, t.ref.task))
        audits = self._audits(ordered, AuditBudget(self.queries), fresh=False)
        changes: dict[str, dict[str, Any]] = {}
        for status in ordered:
            change = changes.setdefault(
                status.ref.change, {"change": status.ref.change, "counts": Counter(), "rounds": {}, "attention": 0}
            )
            change["counts"][_bucket(status)] += 1
            rounds = change["rounds"].setdefault(status.ref.session, {"round": status.ref.session, "counts": Counter()})
            rounds["counts"][_bucket(status)] += 1
            verified = verification_of(status, self.queries.roots.state_root)
            change["attention"] += bool(attention_of(status, audits.get(status.ref, ""), verified=verified))
        return {
            "version": version,
            "state_root": str(self.queries.roots.state_root),
            "total": len(tasks),
            "attention": sum(c["attention"] for c in changes.values()),
            "claims": [{"ref": str(t.ref), "claim": t.claim} for t in claims],
            "free_writer_slots": (slots := writer_slots(len(claims), self.writer_cap)).free,
            "writers": slots.describe(),
            "changes": [
                {
                    **c,
                    "counts": dict(c["counts"]),
                    "rounds": [{**r, "counts": dict(r["counts"])} for r in c["rounds"].values()],
                }
                for c in changes.values()
            ],
        }

    def page(self, change: str, offset: int, limit: int = PAGE) -> dict[str, Any]:
        with self._lock:
            rows = sorted((j for j in self.tasks.values() if j[0].ref.change == change), key=lambda j: str(j[0].ref))
        now = time.time()
        shown = [status for status, _ in rows[offset : offset + limit]]
        audits = self._audits(shown, AuditBudget(self.queries), fresh=True)
        return {
            "change": change,
            "offset": offset,
            "total": len(rows),
            "tasks": [_row(task_facts(status, now, audits.get(status.ref, ""), self.queries)) for status in shown],
        }

    def _audits(self, statuses: list[TaskStatus], budget: AuditBudget, *, fresh: bool) -> dict[Ref, str]:
        """The audit verdicts of the returned worktree tasks among ``statuses``: those held, unless
        ``fresh``; the others audited within ``budget``, and held."""
        with self._lock:
            held = dict(self.audits)
        found: dict[Ref, str] = {}
        for status in filter(auditable, statuses):
            known = None if fresh else held.get(str(status.ref))
            found[status.ref] = known if known is not None else budget.verdict(status)
        made_for = {id(s) for s in statuses}
        with self._lock:  # a verdict is held only for the status it was made for: a file event may have come since
            current = {ref for ref in map(str, found) if ref in self.tasks and id(self.tasks[ref][0]) in made_for}
            self.audits.update({str(ref): v for ref, v in found.items() if v != NOT_AUDITED and str(ref) in current})
        return found

    def detail(self, ref: Ref) -> dict[str, Any]:
        """The task's TASK text and its REPORT, focused handoff first: all of it plain text."""
        task, stored = self.queries.read_task(ref)
        detail: dict[str, Any] = {
            "ref": str(ref),
            "kind": task.kind,
            "task_text": stored.text,
            "task_sha256": stored.sha256,
            "meanings": HEADING_MEANINGS,
        }
        try:
            view = report_view.read_handoff(self.queries, ref)
        except HandoffError as exc:  # no REPORT yet, or one the task's problems already describe
            logger.debug("no report shown for %s: %s", ref, exc.code)
            return detail | {"report": None}
        return detail | {
            "report": {
                "header": view.header,
                "focused": view.focused,
                "sections": view.sections,
                "flags": list(view.flags),
                "task_changed": view.pinned_task_matches is False,
                "proof": view.proof,
                "audit": task_verdict(self.queries, ref),
            }
        }


def _bucket(status: TaskStatus) -> str:
    return status.state if status.state != "returned" else f"returned:{status.report_status or '?'}"

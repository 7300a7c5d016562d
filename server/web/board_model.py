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
from handoff_core.services.evidence.audit import audit_verdicts, worktree_verdict
from handoff_core.services.rules.ownership import writer_slots
from handoff_core.services.tree import report_view
from handoff_core.services.tree.queries import Queries
from handoff_core.services.tree.status import TaskStatus, task_status

logger = logging.getLogger(__name__)

__all__ = ["PAGE", "BoardModel", "ref_of_path"]

PAGE = 200  # tasks per page of one change


def ref_of_path(state_root: Path, path: Path) -> Ref | None:
    """The task a changed path belongs to, or None for anything else in the tree."""
    try:
        return ref_in(path.relative_to(state_root).parts)
    except ValueError:
        return None


def _row(judged: tuple[TaskStatus, float], now: float, audit: str = "") -> dict[str, Any]:
    status = judged[0]
    scope = status.scope
    return {
        "ref": str(status.ref),
        "kind": status.kind or "?",
        "state": status.label,
        "age_seconds": status.age(now),
        "returned_seconds": status.closed_age(now),
        "workspace": (scope.workspace or "") if scope else "",
        "writable": list(scope.writable) if scope else [],
        "claim": status.claim,
        "problems": [visible(problem) for problem in status.problems],
        "evidence": [f"REPORT proof: {status.proof}"] * (status.proof not in (None, "valid"))
        + [f"audit: {audit}"] * (audit not in ("", "passed")),
        "audit": audit,
    }


@dataclass
class BoardModel:
    queries: Queries
    writer_cap: int
    version: int = 0
    tasks: dict[str, tuple[TaskStatus, float]] = field(default_factory=dict)  # ref -> (status, judged at)
    _lock: threading.Lock = field(default_factory=threading.Lock)

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
        changes: dict[str, dict[str, Any]] = {}
        for status in sorted(tasks, key=lambda t: (t.ref.change, t.ref.session, t.ref.task)):
            change = changes.setdefault(
                status.ref.change, {"change": status.ref.change, "counts": Counter(), "rounds": {}}
            )
            change["counts"][_bucket(status)] += 1
            rounds = change["rounds"].setdefault(status.ref.session, {"round": status.ref.session, "counts": Counter()})
            rounds["counts"][_bucket(status)] += 1
        return {
            "version": version,
            "state_root": str(self.queries.roots.state_root),
            "total": len(tasks),
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
        shown = rows[offset : offset + limit]
        audits = audit_verdicts(self.queries, [status for status, _ in shown])
        return {
            "change": change,
            "offset": offset,
            "total": len(rows),
            "tasks": [_row(t, now, audits.get(t[0].ref, "")) for t in shown],
        }

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
                "audit": worktree_verdict(self.queries, ref),
            }
        }


def _bucket(status: TaskStatus) -> str:
    return status.state if status.state != "returned" else f"returned:{status.report_status or '?'}"

"""The one status view: per task, the facts every surface shows, built here once.

``handoff_status`` (MCP), ``handoff-mcp status`` (its table and ``--json``) and the board each
render these facts and build none of their own: a task's state, claim, locator, REPORT proof,
audit verdict, the last verification of its acceptance checks (``verify_task``, as this user's cache
keeps it: ``evidence.verifications``), its problems (a blocked or failed return's blocker among them,
as its REPORT states it: plain text, cut short), and the one reason it needs attention. A failed audit, a proof that
is not valid and an unreadable task are problems everywhere, so no summary shows such a task as a
good return. A fact a surface should show is added here, once.

Audits cost a few git calls each: a view audits at most ``MAX_AUDITS`` returned worktree tasks per
answer (``AuditBudget``), as ``audit_verdicts`` does; a tree without worktree tasks runs no git.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from handoff_core.contract.ids import Ref
from handoff_core.contract.markdown import sections
from handoff_core.contract.values import visible
from handoff_core.errors import HandoffError
from handoff_core.layout import BLOCKER_SHOWN, REPORT_FILE, REPORT_NEXT
from handoff_core.services.evidence.audit import MAX_AUDITS, audit_verdicts, audited
from handoff_core.services.evidence.effects import RemoteAnswers
from handoff_core.services.evidence.endings import ended_without_report
from handoff_core.services.evidence.verifications import Recorded, last_verification
from handoff_core.services.tree.queries import Queries
from handoff_core.services.tree.status import TaskStatus, task_status

__all__ = [
    "NOT_AUDITED",
    "AuditBudget",
    "TaskFacts",
    "attention_of",
    "auditable",
    "blocker_of",
    "last_verified",
    "problems_of",
    "task_facts",
    "verification_of",
]

NOT_AUDITED = "not audited here: call audit_task"
_TROUBLED_RETURNS = ("blocked", "failed")  # a return the Lead has to act on, even with sound evidence


@dataclass(frozen=True, kw_only=True, slots=True)
class TaskFacts:
    ref: Ref
    kind: str  # "" when the TASK cannot be read
    state: str  # ``returned:<status>`` for a returned task
    age_seconds: float
    closed_seconds: float | None  # since the REPORT (or RELEASE) closed it; None while open
    claim: str  # the writer claim as shown; "" when it holds none
    # The task it retries or reviews (``retry of REF``, ``review of REF at SHA``) and a sandbox the Lead
    # opted out of (``sandbox: off``); "" for none.
    link: str
    workspace: str
    writable: tuple[str, ...]
    has_locator: bool
    proof: str  # the REPORT's signature: valid, invalid, absent; "" without a REPORT
    audit: str  # the audit verdict of a returned task the views audit (``audit.audited``); "" for any other
    verification: str  # the last verify_task verdict on its REPORT (passed, failed, unknown); "" for none
    problems: tuple[str, ...]  # validation problems, notes, leftovers and the evidence that does not hold
    attention: str  # why the Lead has to look at it now; "" when nothing is wrong


def auditable(status: TaskStatus) -> bool:
    """Whether status audits the task: returned, in a worktree of its own or a ``current`` one dispatched
    in git (``audit.audited``)."""
    return status.state == "returned" and status.scope is not None and audited(status.scope)


@dataclass
class AuditBudget:
    """Audit verdicts for one answer: at most ``limit`` audits run, each once; the rest say so."""

    queries: Queries
    limit: int = MAX_AUDITS
    _found: dict[Ref, str] = field(default_factory=dict)
    _asked: RemoteAnswers = field(default_factory=RemoteAnswers)  # each git remote asked once per answer

    def verdict(self, status: TaskStatus) -> str:
        if not auditable(status):
            return ""
        if status.ref not in self._found:
            left = self.limit - sum(1 for v in self._found.values() if v != NOT_AUDITED)
            self._found |= audit_verdicts(self.queries, [status], 1 if left > 0 else 0, self._asked)
        return self._found.get(status.ref, "")


def ending_of(status: TaskStatus, state_root: Path | None) -> str:
    """ "ended without a report" when a session of this still-open task stopped with no REPORT, as its
    Stop hook recorded it in this user's cache; "" otherwise (a REPORT or RELEASE since ends it)."""
    if state_root is None or not status.outstanding:
        return ""
    ending = ended_without_report(str(state_root), str(status.ref))
    if ending is None:
        return ""
    return (
        f"ended without a report (session {ending.session_id}): its executor stopped; dispatch a retry, or "
        "release_writer once it is seen to have stopped"
    )


def verification_of(status: TaskStatus, state_root: Path | None) -> Recorded | None:
    """The last verification of a returned task's REPORT, as this user's cache keeps it; None for none."""
    if state_root is None or status.state != "returned":
        return None
    return last_verification(str(state_root), str(status.ref), status.closed_at)


def last_verified(queries: Queries, ref: Ref) -> str:
    """A task's last verification as ``read_handoff`` shows it: ``verdict: why``; "" for none."""
    verified = verification_of(task_status(ref, queries.snapshot(ref)), queries.roots.state_root)
    return "" if verified is None else f"{verified.verdict}: {verified.why}"


def _unverified(verified: Recorded | None) -> str:
    """What a verification that did not pass says; "" for none, or one that passed."""
    return (
        "" if verified is None or verified.verdict == "passed" else f"verification {verified.verdict}: {verified.why}"
    )


def blocker_of(status: TaskStatus, queries: Queries | None) -> str:
    """What stopped a blocked or failed return, as its REPORT's problems section says it: one line of
    plain text (the executor's words: never markup, every invisible character spelled out), cut at
    ``BLOCKER_SHOWN`` characters; "" for any other task."""
    if queries is None or status.state != "returned" or status.report_status not in _TROUBLED_RETURNS:
        return ""
    said = f"REPORT {status.report_status}"
    try:
        data = queries.read_optional(status.ref, REPORT_FILE) or b""
    except HandoffError as exc:
        return f"{said}: its problems cannot be read ({exc.code}); read the REPORT"
    text = sections(data.decode("utf-8", "replace")).get(REPORT_NEXT, "")
    head = text[: 8 * BLOCKER_SHOWN]  # a long section costs no more than a short one
    line = visible(head)
    if line in ("", "无"):  # 无: none, as write_report fills a field left out
        return f"{said}: its problems section names no blocker; read the REPORT"
    cut = len(line) > BLOCKER_SHOWN or len(head) < len(text)
    return f"{said}: {line[:BLOCKER_SHOWN]}…" if cut else f"{said}: {line}"


def problems_of(
    status: TaskStatus, audit: str = "", ended: str = "", verified: Recorded | None = None, blocker: str = ""
) -> tuple[str, ...]:
    """Everything wrong with a task, in one list every surface shows alike."""
    found = [*status.problems, *status.notes, *(f"leftover temp file {name}" for name in status.temp_files)]
    found += [said for said in (ended, blocker) if said]
    if status.proof not in (None, "valid"):
        found.append(f"REPORT proof: {status.proof}")
    if audit not in ("", "passed"):
        found.append(f"audit: {audit}")
    if unverified := _unverified(verified):
        found.append(unverified)
    return tuple(found)


def attention_of(status: TaskStatus, audit: str = "", ended: str = "", verified: Recorded | None = None) -> str:
    """The one reason the Lead has to look at the task now, most serious first; "" when none."""
    if status.state in ("invalid", "incomplete"):
        first = status.problems[0] if status.problems else "TASK.md is missing"
        return f"{status.state}: {first}"
    if ended:
        return ended
    if audit == "failed":
        return "audit failed: the change leaves the TASK's scope (audit_task lists the paths)"
    if unverified := _unverified(verified):
        return unverified
    if status.proof == "invalid":
        return "REPORT proof invalid: edited after publishing, or signed by another key"
    if status.proof == "absent":
        return "REPORT proof absent: not published with the task's token"
    if status.report_status in _TROUBLED_RETURNS:
        return f"returned {status.report_status}: read the REPORT"
    rest = [
        p for p in problems_of(status, audit, ended, verified) if p != f"audit: {NOT_AUDITED}"
    ]  # not a fault, a limit
    return rest[0] if rest else ""


def task_facts(status: TaskStatus, now: float, audit: str = "", queries: Queries | None = None) -> TaskFacts:
    """The facts every surface shows; with ``queries``, an open task's session that ended without its
    REPORT, a returned task's last verification and a blocked or failed return's blocker are among them."""
    scope = status.scope
    state_root = queries.roots.state_root if queries is not None else None
    ended = ending_of(status, state_root)
    verified = verification_of(status, state_root)
    return TaskFacts(
        ref=status.ref,
        kind=status.kind or "",
        state=status.label,
        age_seconds=status.age(now),
        closed_seconds=status.closed_age(now),
        claim=status.claim,
        link="; ".join(part for part in (status.links, status.containment) if part),
        workspace=(scope.workspace or "") if scope else "",
        writable=tuple(scope.writable) if scope else (),
        has_locator=status.has_locator,
        proof=status.proof or "",
        audit=audit,
        verification=verified.verdict if verified is not None else "",
        problems=problems_of(status, audit, ended, verified, blocker_of(status, queries)),
        attention=attention_of(status, audit, ended, verified),
    )

"""Tools in both roles: write_report (token-gated) and the read-only views."""

from __future__ import annotations

import time
from contextlib import AbstractContextManager
from functools import partial
from pathlib import Path
from typing import Annotated

import pydantic_core
from mcp.server.mcpserver.tools import Tool
from pydantic import Field

from handoff_core.contract.ids import parse_ref
from handoff_core.contract.report import Report, first_sentence, focused_problem, summary_line
from handoff_core.layout import FOCUSED_LENGTH, REPORT_FILE, ReportStatus, Stage
from server.mcp.models import ReportWritten, Status, TaskState, TaskView, Validation
from server.mcp.params import RefArg, RefNamed
from server.mcp.registration import READ_ONLY, WRITE_ONCE, ServicesArg, tool
from server.mcp.services import TASK_SCOPE, Services
from server.mcp.summaries import status_summary

TYPE_CHECKING = False
if TYPE_CHECKING:
    from handoff_core.services.tree.status import TaskStatus
    from handoff_core.services.views.status_view import TaskFacts

__all__ = ["handoff_status", "read_task", "tools", "validate_handoff", "write_report"]


def write_report(
    ref: RefArg,
    token: str,
    status: ReportStatus,
    focused: Annotated[str, Field(description=f"{FOCUSED_LENGTH}: done, decided, next")],
    artifacts: Annotated[str, Field(description="files, commits, dirty state")],
    verification: Annotated[str, Field(description="commands, exit codes, output")],
    services: ServicesArg,
    unverified: str = "",
    problems: str = "",
    task_sha256: str = "",
    accept_warnings: bool = False,
    source_checkpoint: str = "",
) -> ReportWritten:
    """Publish the task's REPORT.md once."""
    parsed = parse_ref(ref)
    services.check_report_token(parsed, token)
    # "无" (none) when left out; a schema default in Chinese costs every agent six bytes a character.
    report = Report(
        session=parsed.session,
        task=parsed.task,
        status=status,
        focused=focused,
        artifacts=artifacts,
        verification=verification,
        unverified=unverified or "无",
        problems=problems or "无",
        source_checkpoint=source_checkpoint or None,
    )
    # Everything the reply needs is made before the publish: nothing after it may fail.
    roots = services.store.roots
    location = roots.shown(roots.task_dir(parsed) / REPORT_FILE)
    reply_line = summary_line(parsed.session, parsed.task, status, location, first_sentence(focused))
    warnings = [problem] if (problem := focused_problem(focused)) is not None else []
    stored = services.publish_report(report, parsed, token, task_sha256 or None, accept_warnings)
    return ReportWritten(
        path=str(stored.path),
        sha256=stored.sha256,
        created=stored.created,
        reply_line=reply_line,
        warnings=warnings,
    )


def read_task(ref: RefNamed, services: ServicesArg) -> TaskView:
    """A task's TASK.md and its sha256."""
    task, stored = services.queries.read_task(parse_ref(ref))
    return TaskView(
        kind=task.kind,
        task_sha256=stored.sha256,
        task_path=str(stored.path),
        text=stored.text,
    )


def validate_handoff(ref: RefArg, stage: Stage, services: ServicesArg) -> Validation:
    """Validate a task's files."""
    verdict = services.queries.validate(parse_ref(ref), stage)
    return Validation(
        ok=verdict.ok,
        errors=list(verdict.errors),
        warnings=list(verdict.warnings),
        caveat=verdict.caveat,
        proof=verdict.proof or "",
    )


async def handoff_status(
    services: ServicesArg,
    change: Annotated[str, Field(description="default: all active")] = "",
    session: str = "",
    view: Annotated[str, Field(description="needs_lead, all, state or cursor")] = "",
    since: Annotated[str, Field(description="ISO time")] = "",
) -> Status:
    """Counts per state, a page of tasks."""
    # Sessions asking the same at once share one answer, made after each of them asked.
    question = (TASK_SCOPE.get(), change, session, view, since)
    return await services.status_answers.answer(question, partial(_status_of, services, change, session, view, since))


def _status_of(services: Services, change: str, session: str, view: str, since: str) -> Status:
    from handoff_core.services.exchange.outbound import external_dispatches
    from handoff_core.services.rules.ownership import writer_slots
    from handoff_core.services.tree.archiving import archive_check_of
    from handoff_core.services.tree.status_page import changed_since, page_status
    from handoff_core.services.views.status_view import AuditBudget, task_facts

    queries = services.queries
    if (scope := TASK_SCOPE.get()) is not None:  # a task's session sees its own task only
        tasks = [t for t in queries.status(scope.change, scope.session) if t.ref == scope]
        view = "all"
    else:
        # A cold server glances at what it holds no verdict on; the page is judged in full.
        tasks = queries.status(change or None, session or None, glancing=True)
    every = tasks
    claims = [t for t in tasks if t.claims_writer]  # of every task: a filter never frees a slot
    if since:
        tasks = changed_since(tasks, since)
    now = time.time()
    rows: dict[str, TaskState] = {}  # each row built once: sized while paging, then sent
    audits = AuditBudget(queries)  # a few git calls per returned worktree task, for the page only

    def sent_bytes(status: TaskStatus) -> int:
        rows[str(status.ref)] = row = _task_state(task_facts(status, now, audits.verdict(status), queries))
        return _sent_bytes(row)

    with queries.page_judge(every) as judge:
        page = page_status(tasks, view or "needs_lead", now=now, size=sent_bytes, judge=judge)
    if scope is None:
        queries.judge_later(every, change or None, session or None)
    return Status(
        counts=page.counts,
        unjudged=page.unjudged,
        tasks=[rows[str(t.ref)] for t in page.tasks],
        next_cursor=page.next_cursor,
        free_writer_slots=(slots := writer_slots(len(claims), services.settings.writer_cap)).free,
        writers=slots.describe() + (f"; {archive_check_of(change, every).describe()}" if change else ""),
        state_root=str(services.settings.state_root),
        external=[] if TASK_SCOPE.get() else external_dispatches(Path(services.settings.project_root)),
        events=services.events(),
    )


def tools() -> list[Tool]:
    return [
        tool(write_report, WRITE_ONCE),
        tool(read_task, READ_ONLY),
        tool(validate_handoff, READ_ONLY),
        tool(handoff_status, READ_ONLY, summary=status_summary, answering=_answering),
    ]


def _answering(services: Services) -> AbstractContextManager[None]:
    return services.queries.answering()


def _task_state(facts: TaskFacts) -> TaskState:
    return TaskState(
        ref=str(facts.ref),
        kind=facts.kind,
        state=facts.state,
        age_seconds=facts.age_seconds,
        claim="; ".join(part for part in (facts.claim, facts.link) if part),  # a link costs no schema field
        has_locator=facts.has_locator,
        problems=list(facts.problems),
        proof=facts.proof,
        audit=facts.audit,
        verification=facts.verification,
        attention=facts.attention,
    )


def _sent_bytes(row: TaskState) -> int:
    """A row's bytes in the reply's text: the SDK prints it with indent 2, nested two levels deep."""
    text = pydantic_core.to_json(row, indent=2)
    return len(text) + 4 * (text.count(b"\n") + 1) + 2

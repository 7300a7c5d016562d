"""Lead-only tools: dispatch, locator, capture and release."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

from mcp.server.mcpserver.tools import Tool
from pydantic import Field

from handoff_core.contract.checks import Check
from handoff_core.contract.ids import parse_ref
from handoff_core.contract.scope import Scope, SharedPath, workspace_of
from handoff_core.contract.task import TaskBody
from handoff_core.errors import InvalidContent
from handoff_core.layout import REPORT_FILE, AuthorisedAction, Kind, ReleaseKind, ReportStatus, SandboxMode
from handoff_core.services.capabilities.tokens import executor_session_id
from handoff_core.services.tree import waiting
from server.mcp.models import Audited, CreatedTask, Replay, Verified, Waited, Written
from server.mcp.params import AcceptanceCheck, Globs, RefArg, Text
from server.mcp.registration import CREATE, READ_ONLY, WRITE_ONCE, ServicesArg, tool

TYPE_CHECKING = False
if TYPE_CHECKING:
    from handoff_core.files.task_dir import StoredFile
    from server.mcp.services import Services

__all__ = [
    "audit_task",
    "capture_report",
    "create_task",
    "record_session_locator",
    "release_writer",
    "tools",
    "verify_task",
    "wait_for_reports",
]


def shared_paths(entries: list[str]) -> tuple[SharedPath, ...]:
    pairs = [entry.rpartition("=") for entry in entries]
    if any(not path or not owner for path, _, owner in pairs):
        raise InvalidContent("shared entries are PATH=OWNER, e.g. pyproject.toml=lead")
    return tuple(SharedPath(path, owner) for path, _, owner in pairs)


def create_task(
    change: Annotated[str, Field(description="YYYY-MM-DD-topic")],
    topic: Annotated[str, Field(description="lowercase-hyphen")],
    kind: Kind,
    goal: Text,
    inputs: Text,
    acceptance: Text,
    services: ServicesArg,
    acceptance_checks: list[AcceptanceCheck] = [],  # noqa: B006 - never mutated; the schema stays an array
    workspace: Annotated[str, Field(description="current|required, implementation only")] = "",
    writable: Globs = [],  # noqa: B006 - never mutated; keeps the schema a plain array
    read_only: list[str] = [],  # noqa: B006 - globs, as writable says
    shared: Annotated[list[str], Field(description="PATH=OWNER entries")] = [],  # noqa: B006
    artifacts: Annotated[list[str], Field(description="a read-only task's outputs")] = [],  # noqa: B006
    scope_notes: Text = "",
    return_notes: Text = "",
    ticket: str = "",
    session: Annotated[str, Field(description="default: the open round")] = "",
    new_round: Annotated[bool, Field(description="independent plan")] = False,
    force_new: bool = False,  # never answer with an identical task made before
    writer_limit: Annotated[int, Field(description="parallel writers (default 1)")] = 0,
    resources: Annotated[list[str], Field(description="exclusive names: port:5432, db:test")] = [],  # noqa: B006
    retry_of: Annotated[str, Field(description="ref it retries")] = "",
    review_of: Annotated[str, Field(description="ref it reviews")] = "",
    worktree: Annotated[str, Field(description="linked worktree, with branch")] = "",
    branch: Annotated[str, Field(description="alone: pushed to the git remote")] = "",
    authorised_actions: list[AuthorisedAction] = [],  # noqa: B006 - beyond writing in scope, running checks
    stop_conditions: list[str] = [],  # noqa: B006 - one line each
    sandbox: SandboxMode = "required",  # how the executor's launch is contained (layout.SANDBOX_MODES)
) -> CreatedTask:
    """Publish a frozen TASK.md; returns its dispatch message."""
    from handoff_core.services.writing.dispatch import TaskRequest

    scope = Scope(
        workspace=workspace_of(workspace),
        writable=tuple(writable),
        read_only=tuple(read_only),
        shared=shared_paths(shared),
        artifacts=tuple(artifacts),
        notes=scope_notes,
        resources=tuple(resources),
        worktree=worktree,
        branch=branch,
        actions=tuple(authorised_actions),
        stop_conditions=tuple(stop_conditions),
        sandbox=sandbox,
    )
    body = TaskBody(
        kind=kind,
        goal=goal,
        inputs=inputs,
        scope=scope,
        acceptance=acceptance,
        return_notes=return_notes,
        ticket=ticket or None,
        checks=tuple(Check(c.run, c.cwd, c.timeout_s) for c in acceptance_checks),
    )
    earlier = parse_ref(retry_of) if retry_of else None
    request = TaskRequest(
        change=change,
        topic=topic,
        body=body,
        session=session or None,
        new_round=new_round,
        review_of=parse_ref(review_of) if review_of else None,
        force_new=force_new,
        token_check=services.token_check,
        writer_limit=writer_limit or None,
        retry_of=earlier,
        signing_key=services.signing_key,
    )
    services.secret()  # a refused secret must stop the dispatch before TASK.md (and its claim) exists
    stored = services.store.create_task(request)
    services.dispatched(stored.ref)
    return _created(services, stored)


def _created(services: Services, stored: StoredFile) -> CreatedTask:
    """The answer to a dispatch: where its files are, its token, and the executor's message and config."""
    from server.client_config import ExecutorTask
    from server.mcp.dispatch import dispatch_message, executor_config

    token = services.token(stored.ref)
    executor = ExecutorTask(str(stored.ref), stored.sha256, executor_session_id(token), token)
    roots = services.store.roots
    task_rel = roots.shown(stored.path)
    report_rel = roots.shown(stored.path.with_name(REPORT_FILE))
    message = dispatch_message(stored, token, task_rel, report_rel, roots.project_root)
    return CreatedTask(
        ref=str(stored.ref),
        created=stored.created,
        task_path=str(stored.path),
        task_path_in_project=task_rel,
        report_path_in_project=report_rel,
        task_sha256=stored.sha256,
        report_token=token,
        dispatch_message=message,
        executor_config=executor_config(services.settings, services.executor_url, token, executor, message),
        warnings=list(stored.warnings),
    )


async def wait_for_reports(
    refs: list[str],  # the tasks watched: the description says which files
    services: ServicesArg,
    timeout_s: Annotated[float, Field(description=f"at most {waiting.MAX_TIMEOUT:g}")] = 30.0,
) -> Waited:
    """Wait for a listed task's REPORT or RELEASE, bounded."""
    result = await waiting.wait_for_reports(services.queries, [parse_ref(ref) for ref in refs], timeout_s)
    return Waited(
        arrived=[f"{a.ref} {a.file}" for a in result.arrived],
        pending=[str(ref) for ref in result.pending],
        timed_out=result.timed_out,
        waited_seconds=result.waited_seconds,
        state_root=str(services.settings.state_root),
    )


def record_session_locator(
    ref: RefArg,
    services: ServicesArg,
    path: Annotated[str, Field(description="absolute; empty: find by session_id")] = "",
    verify: Annotated[bool, Field(description="false: confirmed otherwise")] = True,
    session_id: str = "",  # default: the id the executor's launch line pinned
) -> Written:
    """Record the executor's confirmed session-log path."""
    parsed = parse_ref(ref)
    if path:
        stored = services.store.record_session_locator(parsed, path, verify)
    else:
        ids = [session_id or executor_session_id(services.token(parsed))]
        stored = services.store.record_found_locator(parsed, ids, Path.home(), dict(os.environ))
    return Written(path=str(stored.path), sha256=stored.sha256, created=stored.created)


def capture_report(
    ref: RefArg,
    status: ReportStatus,
    original_locator: Annotated[str, Field(description="where it came from")],
    text: str,  # the executor's reply: the description says verbatim
    services: ServicesArg,
) -> Written:
    """An executor's text-only reply, verbatim, as its REPORT."""
    parsed = parse_ref(ref)
    stored = services.store.capture_report(parsed, status, original_locator, text, token=services.token(parsed))
    return Written(path=str(stored.path), sha256=stored.sha256, created=stored.created)


def audit_task(ref: RefArg, services: ServicesArg) -> Audited:
    """Judge a task's change (committed and not) against its scope."""
    from handoff_core.services.evidence import audit

    found = audit.audit_task(services.queries, parse_ref(ref))
    return Audited(
        verdict=found.verdict,
        reason=found.reason,
        base=found.base,
        checkpoint=found.checkpoint,
        worktree=found.worktree,
        changed=list(found.changed),
        changed_count=found.changed_count,
        violations=[{"path": v.path, "why": v.why} for v in found.violations],
        dirty=list(found.dirty),
        not_judged=list(found.not_judged),
    )


def verify_task(ref: RefArg, services: ServicesArg) -> Verified:
    """Replay the TASK's checks at the REPORT's checkpoint, sandboxed."""
    from handoff_core.services.acceptance.verification import verify_task as verify

    found = verify(services.queries, parse_ref(ref), str(services.settings.secret_file))
    return Verified(
        verdict=found.verdict,
        reason=found.reason,
        replayed=found.replayed,
        checks=[
            Replay(run=c.run, exit_code=c.exit_code, seconds=c.seconds, tail=c.tail, why=c.why, claimed=c.claimed)
            for c in found.checks
        ],
        flags=list(found.flags),
    )


def release_writer(
    ref: RefArg,
    kind: Annotated[ReleaseKind, Field(description="stopped: seen to stop; none: never ran")],
    evidence: Annotated[str, Field(description="stop locator, or why there is no writer")],
    services: ServicesArg,
    details: Text = "",
) -> Written:
    """End a writer claim without a REPORT, with evidence."""
    stored = services.store.release_writer(parse_ref(ref), kind, evidence, details)
    return Written(path=str(stored.path), sha256=stored.sha256, created=stored.created)


def tools() -> list[Tool]:
    return [
        tool(create_task, CREATE),
        tool(wait_for_reports, READ_ONLY),
        tool(record_session_locator, WRITE_ONCE),
        tool(capture_report, WRITE_ONCE),
        tool(release_writer, WRITE_ONCE),
        tool(audit_task, READ_ONLY),
        tool(verify_task, CREATE),  # not read-only: it runs the task's checks (contained) and keeps their verdict
    ]

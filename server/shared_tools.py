"""Tools in both roles: write_report (token-gated) and the read-only views."""

from __future__ import annotations

from typing import Annotated, Literal

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations
from pydantic import Field

from handoff_core.report import Report, count_sentences, first_sentence, summary_line
from handoff_core.token import check_token
from server.app import Context, ref_of, tool_errors
from server.models import ReportWritten, Status, TaskState, TaskView, Validation

Ref = Annotated[str, Field(description="change/session/task, as in the dispatch message")]
Text = Annotated[str, Field(description="Markdown")]
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
WRITE_ONCE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False)


def register(server: MCPServer, context: Context) -> None:
    store = context.store

    @server.tool(annotations=WRITE_ONCE)
    @tool_errors
    def write_report(
        ref: Ref,
        token: Annotated[str, Field(description="report token from the dispatch message")],
        status: Literal["completed", "blocked", "failed", "cancelled"],
        focused: Annotated[str, Field(description="3-5 sentences: done, key decisions, stop point, next safe action")],
        artifacts: Annotated[str, Field(description="changed files, commits, dirty state")],
        verification: Annotated[str, Field(description="commands, exit codes, environment, observations")],
        unverified: Annotated[str, Field(description="what is not done or not verified")] = "无",
        problems: Annotated[str, Field(description="blockers, what was tried, who must provide what")] = "无",
        task_sha256: Annotated[str | None, Field(description="sha256 of the TASK you were given")] = None,
    ) -> ReportWritten:
        """Publish this task's REPORT.md once (never overwritten). Retrying identical content is harmless."""
        parsed = ref_of(ref)
        check_token(context.secret(), context.settings.state_root, parsed, token)
        report = Report(parsed.session, parsed.task, status, focused, artifacts, verification, unverified, problems)
        stored = store.write_report(report, parsed.change, task_sha256)
        location = context.in_project(stored.path)
        warnings = [] if 3 <= count_sentences(focused) <= 5 else ["focused handoff should be 3 to 5 sentences"]
        return ReportWritten(
            ref=ref,
            path=str(stored.path),
            sha256=stored.sha256,
            created=stored.created,
            reply_line=summary_line(parsed.session, parsed.task, status, location, first_sentence(focused)),
            warnings=warnings,
        )

    @server.tool(annotations=READ_ONLY)
    @tool_errors
    def read_task(ref: Ref) -> TaskView:
        """Read a TASK.md back as structured fields, with its sha256."""
        task, stored = store.read_task(ref_of(ref))
        scope = task.scope
        return TaskView(
            ref=ref,
            kind=task.kind,
            goal=task.goal,
            inputs=task.inputs,
            workspace=scope.workspace,
            writable=list(scope.writable),
            read_only=list(scope.read_only),
            shared=[f"{s.path}={s.owner}" for s in scope.shared],
            artifacts=list(scope.artifacts),
            scope_notes=scope.notes,
            acceptance=task.acceptance,
            return_notes=task.return_notes,
            report_path_in_project=task.report_path,
            ticket=task.ticket,
            task_sha256=stored.sha256,
            task_path=str(stored.path),
        )

    @server.tool(annotations=READ_ONLY)
    @tool_errors
    def validate_handoff(ref: Ref, stage: Literal["dispatch", "return"]) -> Validation:
        """Check one task's files (dispatch: before delivery; return: after the REPORT). Structure only."""
        verdict = store.validate(ref_of(ref), stage)
        return Validation(
            ref=ref,
            stage=stage,
            ok=verdict.ok,
            errors=list(verdict.errors),
            warnings=list(verdict.warnings),
            caveat=verdict.caveat,
        )

    @server.tool(annotations=READ_ONLY)
    @tool_errors
    def handoff_status(
        change: Annotated[str | None, Field(description="one change; default all active")] = None,
        session: Annotated[str | None, Field(description="one round of that change")] = None,
    ) -> Status:
        """Derived state of every task (dispatched, returned:<status>, released, invalid…) and writer claims."""
        tasks = store.status(change, session)
        claims = [str(t.ref) for t in tasks if t.claims_writer]
        return Status(
            tasks=[
                TaskState(
                    ref=str(t.ref),
                    kind=t.kind,
                    state=t.state,
                    age_seconds=t.age_seconds,
                    workspace=t.scope.workspace if t.scope else None,
                    writable=list(t.scope.writable) if t.scope else [],
                    has_locator=t.has_locator,
                    temp_files=list(t.temp_files),
                    problems=list(t.problems),
                )
                for t in tasks
            ],
            writer_claims=claims,
            free_writer_slots=max(0, context.settings.writer_cap - len(claims)),
        )

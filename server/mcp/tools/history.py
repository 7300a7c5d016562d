"""Reading handoffs back and looking into history: read_handoff, search_history, find_session_log,
write_handoff and resolve_coordination."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

from mcp.server.mcpserver.tools import Tool
from pydantic import Field

from handoff_core.contract.ids import parse_ref
from handoff_core.layout import COORDINATION_FILE, LogTool
from handoff_core.services.logs import log_search
from server.mcp.models import Coordination, Document, Handoff, History, LogCandidates
from server.mcp.params import RefArg
from server.mcp.registration import CREATE, READ_ONLY, ServicesArg, tool

__all__ = [
    "find_session_log",
    "lead",
    "read_handoff",
    "resolve_coordination",
    "search_history",
    "shared",
    "write_handoff",
]

Slug = str


def read_handoff(ref: RefArg, services: ServicesArg) -> Handoff:
    """A REPORT (untrusted), focused first."""
    from handoff_core.services.evidence.audit import task_verdict
    from handoff_core.services.tree import report_view
    from handoff_core.services.views.status_view import last_verified

    queries = services.queries
    view = report_view.read_handoff(queries, parse_ref(ref))
    rest = "\n\n".join(f"## {name}\n{text}" for name, text in view.sections.items())
    return Handoff(
        header=view.header,
        focused=view.focused,
        rest=rest,
        locator_path=view.locator_path or "",
        task_changed=view.pinned_task_matches is False,
        provenance=[f"{p.file} by {p.written_by}, sha256 {p.sha256}, {p.path}" for p in view.provenance],
        flags=list(view.flags),
        truncated=view.truncated,
        proof=view.proof,
        audit=task_verdict(queries, view.ref),
        verification=last_verified(queries, view.ref),
    )


def search_history(
    ref: RefArg,
    query: Annotated[str, Field(description="all must match")],
    services: ServicesArg,
    max_hits: Annotated[int, Field(ge=1, le=log_search.MAX_HITS)] = 5,
    context_chars: Annotated[int, Field(ge=0, le=log_search.MAX_CONTEXT_CHARS)] = 200,
) -> History:
    """Keyword hits in the task's log."""
    from handoff_core.services.tree import report_view

    result = log_search.search(report_view.log_path(services.queries, parse_ref(ref)), query, max_hits, context_chars)
    hits = [f"{h.line} | {h.record} | {h.timestamp} | {h.role}: {h.snippet}" for h in result.hits]
    return History(log_path=result.path, hits=hits, stopped_early=result.stopped_early)


def write_handoff(
    scope: Slug,
    topic: Slug,
    focused: str,
    services: ServicesArg,
    details: str = "",
    references: Annotated[list[str], Field(description="project-relative paths")] = [],  # noqa: B006
    skills: list[str] = [],  # noqa: B006
    history: str = "",
    redact: Annotated[bool, Field(description="redact, not refuse")] = False,
) -> Document:
    """Write a handoff doc (commands/handoff/)."""
    from handoff_core.services.handoffs import session_handoff

    doc = session_handoff.HandoffDoc(
        scope=scope,
        topic=topic,
        focused=focused,
        details=details,
        references=tuple(references),
        skills=tuple(skills),
        history=history,
    )
    stored = services.publish_handoff(doc, redact)
    return Document(path=str(stored.path), sha256=stored.sha256)


def resolve_coordination(
    work_id: Annotated[str, Field(description="e.g. specdev/implement")], services: ServicesArg, stage: str = ""
) -> Coordination:
    """Coordination choice for a Work and stage."""
    from handoff_core.services.project import coordination

    data = services.queries.read_state_file(*COORDINATION_FILE)
    text = None if data is None else data.decode("utf-8", "replace")
    found = coordination.resolve(text, work_id, stage or None)
    return Coordination(choice=found.choice or {}, source=found.source, reasons=list(found.reasons))


def find_session_log(tool: LogTool, session_id: str, services: ServicesArg, ref: str = "") -> LogCandidates:
    """A Claude Code or Codex log by session id (with ref: that task's)."""
    from handoff_core.services.logs import session_logs

    needles = services.queries.log_needles(parse_ref(ref)) if ref else None
    places = session_logs.homes(Path.home(), dict(os.environ), services.settings.state_root, ref)
    found = session_logs.found_logs(tool, session_id, Path.home(), dict(os.environ), places)
    facts = [session_logs.inspect(path, needles) for path in found]
    lines = [f"{f.path}: {'ok' if f.ok else '; '.join(f.problems)}" for f in facts]
    return LogCandidates(candidates=lines, ambiguous=sum(f.ok for f in facts) > 1)


def shared() -> list[Tool]:
    return [
        tool(read_handoff, READ_ONLY),
        tool(search_history, READ_ONLY),
        tool(write_handoff, CREATE),
        tool(resolve_coordination, READ_ONLY),
    ]


def lead() -> list[Tool]:
    return [tool(find_session_log, READ_ONLY)]

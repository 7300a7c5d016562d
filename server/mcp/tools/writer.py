"""The Lead, or its native subagent team, as a writer: claim_writer records the claim as a task of
its own, so a dispatch that conflicts with it is refused exactly as one conflicting with an
executor; release_writer ends it, with evidence, like any other claim."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver.tools import Tool
from pydantic import Field

from handoff_core.contract.scope import Scope, workspace_of
from handoff_core.contract.task import TaskBody
from handoff_core.layout import SelfWriter, Workspace
from server.mcp.models import Claimed
from server.mcp.params import Globs
from server.mcp.registration import CREATE, ServicesArg, tool

__all__ = ["claim_writer", "tools"]


def claim_writer(
    change: str,
    topic: str,
    who: SelfWriter,
    workspace: Workspace,
    writable: Globs,
    why: Annotated[str, Field(description="what is written, by whom")],
    services: ServicesArg,
    resources: list[str] = [],  # noqa: B006 - never mutated
    writer_limit: int = 0,
) -> Claimed:
    """Claim a workspace for the Lead or its team."""
    from handoff_core.services.writing.dispatch import TaskRequest

    writer = "The Lead" if who == "lead" else "The Lead's native subagent team"
    body = TaskBody(
        kind="implementation",
        goal=f"{writer} writes here itself: {why}",
        inputs="None: this task records a writer that is not an executor, so that no dispatch overlaps it.",
        scope=Scope(
            workspace=workspace_of(workspace),
            writable=tuple(writable),
            resources=tuple(resources),
            self_writer=who,
        ),
        acceptance="The Lead ends this claim with release_writer (evidence: its own stop) when the writing is done.",
    )
    request = TaskRequest(change=change, topic=topic, body=body, writer_limit=writer_limit or None)
    stored = services.store.create_task(request)
    return Claimed(ref=str(stored.ref), task_path=str(stored.path))


def tools() -> list[Tool]:
    return [tool(claim_writer, CREATE)]

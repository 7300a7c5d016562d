"""Annotated parameter types the tools share (their JSON schema is what the model reads)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field

from handoff_core.layout import DEFAULT_CHECK_TIMEOUT

__all__ = ["AcceptanceCheck", "Globs", "RefArg", "RefNamed", "Text"]

# A task's ref, as create_task and every listing return it; its form is said once, on read_task (RefNamed):
# tools/list is paid for in every agent's context, and twelve copies of one phrase buy nothing.
RefArg = str
RefNamed = Annotated[str, Field(description="change/session/task")]
Text = str
Globs = Annotated[list[str], Field(description="project-relative globs")]


# One acceptance check (``contract.checks.Check``), which verify_task replays: no docstring, which the
# schema would carry to every Lead's context.
class AcceptanceCheck(BaseModel):
    run: str = Field(description="one shell line, exit 0 passes")
    timeout_s: int = DEFAULT_CHECK_TIMEOUT
    cwd: str = "."

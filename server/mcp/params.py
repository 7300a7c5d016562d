"""Annotated parameter types the tools share (their JSON schema is what the model reads)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

__all__ = ["Globs", "RefArg", "RefNamed", "Text"]

# A task's ref, as create_task and every listing return it; its form is said once, on read_task (RefNamed):
# tools/list is paid for in every agent's context, and twelve copies of one phrase buy nothing.
RefArg = str
RefNamed = Annotated[str, Field(description="change/session/task")]
Text = str
Globs = Annotated[list[str], Field(description="project-relative globs")]

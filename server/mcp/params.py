"""Annotated parameter types the tools share (their JSON schema is what the model reads)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

__all__ = ["Globs", "RefArg", "Text"]

RefArg = Annotated[str, Field(description="change/session/task")]
Text = str
Globs = Annotated[list[str], Field(description="project-relative globs")]

"""save_coordination: the project's coordination choice, as the seed's first setup saves it."""

from __future__ import annotations

from typing import Literal

from mcp.server.mcpserver.tools import Tool

from handoff_core.layout import Mode, SkillsDir
from server.mcp.models import CoordinationSaved
from server.mcp.registration import REPLACE, ServicesArg, tool

__all__ = ["save_coordination", "tools"]


def save_coordination(
    mode: Mode,
    services: ServicesArg,
    skills_dir: Literal["", SkillsDir] = "",  # "": none given (cli and lead need none)
) -> CoordinationSaved:
    """Save the project's coordination choice; herdr/orca need skills_dir."""
    from handoff_core.services.project.coordination_setup import plan_choice, save_choice

    settings = services.settings
    plan = plan_choice(settings.state_root, mode, skills_dir or None)
    saved = save_choice(settings.state_root, settings.project_root, plan)
    return CoordinationSaved(
        outcome=saved.outcome,
        defaults=saved.defaults,
        skill=saved.skill,
        next_step=saved.next_step,
    )


def tools() -> list[Tool]:
    return [tool(save_coordination, REPLACE)]

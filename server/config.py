"""Where the server works and as whom: flags first, then HANDOFF_* environment variables."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from handoff_core.errors import ConfigError
from handoff_core.layout import DEFAULT_STATE_ROOT, DEFAULT_WRITER_CAP
from handoff_core.services.tokens import default_secret_path

__all__ = ["ROLES", "Role", "Settings", "settings_from"]

Role = Literal["lead", "executor"]
ROLES: tuple[Role, ...] = get_args(Role)


@dataclass(frozen=True)
class Settings:
    role: Role
    project_root: Path
    state_root: Path
    secret_file: Path
    writer_cap: int = DEFAULT_WRITER_CAP

    def serve_args(self, role: Role) -> list[str]:
        """Arguments that start a server like this one, in ``role``."""
        return [
            "serve",
            "--role",
            role,
            "--project-root",
            str(self.project_root),
            "--state-root",
            str(self.state_root),
        ]


def _writer_cap(value: str | None) -> int:
    if value is None:
        return DEFAULT_WRITER_CAP
    if not (value.isascii() and value.isdigit() and int(value) >= 1):
        raise ConfigError(f"HANDOFF_WRITER_CAP={value!r} is not a whole number of at least 1: set it to e.g. 1 or 3")
    return int(value)


def settings_from(
    role: str | None,
    project_root: str | None,
    state_root: str | None,
    secret_file: str | None = None,
    *,
    role_required: bool = True,
) -> Settings:
    env = os.environ
    role = role or env.get("HANDOFF_ROLE") or ("" if role_required else "lead")
    if role not in ROLES:
        raise ConfigError(f"role {role!r} is not lead or executor: pass --role lead|executor or set HANDOFF_ROLE")
    project = Path(project_root or env.get("HANDOFF_PROJECT_ROOT") or Path.cwd()).absolute()
    if not project.is_dir():
        raise ConfigError(f"project root {project} is not a directory: pass --project-root or HANDOFF_PROJECT_ROOT")
    state = Path(state_root or env.get("HANDOFF_STATE_ROOT") or DEFAULT_STATE_ROOT)
    state = state if state.is_absolute() else project / state
    secret = Path(secret_file or env.get("HANDOFF_SECRET_FILE") or default_secret_path())
    cap = _writer_cap(env.get("HANDOFF_WRITER_CAP"))
    return Settings(role, project, state.absolute(), secret.absolute(), cap)

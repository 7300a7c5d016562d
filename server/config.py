"""Where the server works and as whom: flags first, then HANDOFF_* environment variables."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from handoff_core.services.tokens import default_secret_path

ROLES = ("lead", "executor")
DEFAULT_STATE_ROOT = Path("speculo/.speculo")
DEFAULT_WRITER_CAP = 3


class ConfigError(Exception):
    """A setting is missing or wrong; the message says which flag or variable to fix."""


@dataclass(frozen=True)
class Settings:
    role: str
    project_root: Path
    state_root: Path
    secret_file: Path
    writer_cap: int = DEFAULT_WRITER_CAP

    def serve_args(self, role: str) -> list[str]:
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
    cap = int(env.get("HANDOFF_WRITER_CAP", DEFAULT_WRITER_CAP))
    return Settings(role, project, state.absolute(), secret.absolute(), cap)

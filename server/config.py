"""Where the server works and as whom: flags first, then HANDOFF_* environment variables."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal, get_args

from handoff_core.contract.ids import Ref
from handoff_core.errors import ConfigError
from handoff_core.files.executor_home import cache_root
from handoff_core.layout import BROKER_VARIABLE, DEFAULT_STATE_ROOT, DEFAULT_WRITER_CAP
from handoff_core.services.capabilities.tokens import default_secret_path
from server.discovery import Found, find_project, lead_tree_of

__all__ = [
    "LEAD_TOOLS",
    "LOOPBACK_HOSTS",
    "ROLES",
    "ROLE_TOOLS",
    "SHARED_TOOLS",
    "TOOLS_LIST_BUDGET",
    "Role",
    "Settings",
    "TeamOptions",
    "secret_path",
    "settings_from",
]

Role = Literal["lead", "executor"]
ROLES: tuple[Role, ...] = get_args(Role)
SHARED_TOOLS = (
    "write_report",
    "read_task",
    "validate_handoff",
    "handoff_status",
    "read_handoff",
    "search_history",
    "write_handoff",
    "resolve_coordination",
)
LEAD_TOOLS = (
    "create_task",
    "wait_for_reports",
    "record_session_locator",
    "capture_report",
    "release_writer",
    "audit_task",
    "verify_task",
    "find_session_log",
    "package_dispatch",
    "receive_return",
    "claim_writer",
    "save_coordination",
)
ROLE_TOOLS: dict[Role, tuple[str, ...]] = {"lead": SHARED_TOOLS + LEAD_TOOLS, "executor": SHARED_TOOLS}
# Bytes of the tools/list answer on the wire: every agent of the role pays them in its context.
TOOLS_LIST_BUDGET: dict[Role, int] = {"lead": 16_384, "executor": 6_144}


@dataclass(kw_only=True, frozen=True)
class Settings:
    role: Role
    project_root: Path
    state_root: Path
    secret_file: Path
    writer_cap: int = DEFAULT_WRITER_CAP
    note: str | None = None  # how the project was found, when it is not simply the one named, and what it lacks
    # This user's cache directory (the Stop hook's counts and session endings, the guard's TASK copies)
    cache_dir: Path | None = None
    task: Ref | None = None  # an executor's one task (serve --ref): its session reaches nothing else
    # A sandboxed executor's broker (its socket): the state root is read-only in the sandbox, so the
    # executor's writes (its REPORT, a session handoff) are published by the broker outside it.
    broker: str | None = None

    def as_role(self, role: Role) -> Settings:
        """These settings, every one kept, for a server of ``role`` (the team server runs both)."""
        return replace(self, role=role)

    @property
    def private_files(self) -> tuple[Path, ...]:
        """What a named download may never be: the token secret (every report token follows from it) and the
        user's cache directory."""
        return (self.secret_file, *((self.cache_dir,) if self.cache_dir is not None else ()))


_LAST_PORT = 65_535
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")  # the names a loopback bind is reached by


@dataclass(kw_only=True, frozen=True)
class TeamOptions:
    """Where the HTTP team server listens, and how its traffic is protected beyond the loopback."""

    host: str = "127.0.0.1"
    port: int = 8765
    tls_cert: str | None = None
    tls_key: str | None = None
    behind_proxy: bool = False
    public_url: str | None = None
    proxy_addresses: tuple[str, ...] = ()  # whose X-Forwarded-For is believed (none: nobody's)

    def __post_init__(self) -> None:
        if bool(self.tls_cert) != bool(self.tls_key):
            raise ConfigError("give --tls-cert and --tls-key together")
        if self.host not in LOOPBACK_HOSTS and not self.tls_cert and not self.behind_proxy:
            raise ConfigError(
                f"binding {self.host} sends tokens off this machine: give --tls-cert and --tls-key, or "
                "--behind-proxy when a TLS-terminating proxy forwards to this port (see the README)"
            )
        if not 0 < self.port <= _LAST_PORT:
            raise ConfigError(f"--port {self.port} is not a TCP port")
        if self.proxy_addresses and not self.behind_proxy:
            raise ConfigError("--proxy-address names the proxy of --behind-proxy: give --behind-proxy too")

    @property
    def scheme(self) -> str:
        return "https" if self.tls_cert else "http"


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
    state = Path(state_root or env.get("HANDOFF_STATE_ROOT") or DEFAULT_STATE_ROOT)
    found = _project(project_root or env.get("HANDOFF_PROJECT_ROOT"), state)
    project = found.project
    state = state if state.is_absolute() else project / state
    secret = secret_path(secret_file)
    cap = _writer_cap(env.get("HANDOFF_WRITER_CAP"))
    return Settings(
        role=role,
        project_root=project,
        state_root=state.absolute(),
        secret_file=secret.absolute(),
        writer_cap=cap,
        note="; ".join(filter(None, [found.note, _lacking(found) if role == "lead" else None])) or None,
        cache_dir=Path(cache_root()).absolute(),
        broker=env.get(BROKER_VARIABLE) if role == "executor" else None,
    )


def secret_path(given: str | None) -> Path:
    """The Lead's token secret: ``given`` (``--secret-file``), else ``$HANDOFF_SECRET_FILE``, else the default."""
    return Path(given or os.environ.get("HANDOFF_SECRET_FILE") or default_secret_path()).absolute()


def _lacking(found: Found) -> str | None:
    """What a Lead's project lacks for the audit, said when its server starts."""
    if found.in_git:
        return None
    return (
        f"git finds no repository at {found.project}: a task dispatched here records no base, so its audit "
        "cannot judge what its executor changes; run `git init` and commit the project, then restart the server"
    )


def _project(given: str | None, state: Path) -> Found:
    if given is None:
        return find_project(Path.cwd(), state)
    project = Path(given).absolute()
    if not project.is_dir():
        raise ConfigError(f"project root {project} is not a directory: pass --project-root or HANDOFF_PROJECT_ROOT")
    return lead_tree_of(project, state)

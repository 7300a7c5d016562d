"""MCP client configurations that work as printed: ``handoff-mcp config`` and ``create_task``'s
``executor_config`` are this one renderer.

Every form names the server by absolute command path and absolute roots (a client started in
another directory, a worktree or under Codex, which passes no ``HANDOFF_*`` variables, still
reaches the same state root). A worker's forms load only this server (``--strict-mcp-config``)
and allow only the executor's tools; Codex gets ``approval_mode = "approve"`` for
``write_report``, which a headless ``codex exec`` needs to call a writing tool.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from server.config import ROLE_TOOLS, Role, Settings

__all__ = [
    "CLIENTS",
    "TOKEN_VARIABLE",
    "Client",
    "Launch",
    "codex_args",
    "http_launch",
    "launch_for",
    "render",
    "server_command",
]

Client = Literal["claude-code", "claude-code-cli", "codex", "codex-args", "herdr", "orca"]
CLIENTS: tuple[Client, ...] = get_args(Client)
NAME = "handoff"
_UV_CACHE_MARKS = ("/uv/archive-v", "/uv/builds-v", "/.cache/uv/")


TOKEN_VARIABLE = "HANDOFF_TOKEN"  # noqa: S105 - a variable name. Where a Codex executor keeps its bearer token (never in config.toml)


@dataclass(frozen=True)
class Launch:
    """How a client reaches this server: an absolute command and its arguments (stdio), or a URL and a
    bearer token (the HTTP team server)."""

    command: str
    args: tuple[str, ...]
    role: Role
    note: str | None = None  # a warning about the command path, for the person reading the output
    url: str | None = None
    token: str | None = None


def server_command() -> tuple[str, str | None]:
    """The installed ``handoff-mcp`` beside this interpreter (else on PATH), and a warning if it may vanish."""
    beside = Path(sys.executable).parent / "handoff-mcp"
    found = str(beside) if beside.exists() else shutil.which("handoff-mcp")
    if found is None:
        return "handoff-mcp", "handoff-mcp is not installed where a client can find it: install it, then print again"
    cache = os.environ.get("UV_CACHE_DIR")
    if any(mark in found for mark in _UV_CACHE_MARKS) or (cache and found.startswith(cache)):
        return found, (
            f"{found} lies in uv's cache, which `uv cache prune` or `uv cache clean` deletes: install with "
            "`uv tool install` (or pipx) and print this configuration again"
        )
    return found, None


def launch_for(settings: Settings, role: Role, command: str | None = None) -> Launch:
    found, note = (command, None) if command else server_command()
    args = ["serve", "--role", role, "--project-root", str(settings.project_root)]
    args += ["--state-root", str(settings.state_root)]
    if role == "lead":
        args += ["--secret-file", str(settings.secret_file)]
    return Launch(found, tuple(args), role, note)


def http_launch(role: Role, url: str, token: str) -> Launch:
    return Launch("", (), role, url=url, token=token)


def _entry(launch: Launch) -> dict[str, object]:
    if launch.url is not None:
        return {"type": "http", "url": launch.url, "headers": {"Authorization": f"Bearer {launch.token}"}}
    return {"type": "stdio", "command": launch.command, "args": list(launch.args)}


def _mcp_json(launch: Launch) -> str:
    return json.dumps({"mcpServers": {NAME: _entry(launch)}}, indent=2)


def _allowed(launch: Launch) -> str:
    return ",".join(f"mcp__{NAME}__{tool}" for tool in ROLE_TOOLS[launch.role])


def _claude_line(launch: Launch) -> str:
    if launch.role == "lead" and launch.url is None:
        return shlex.join(["claude", "mcp", "add", "--scope", "project", NAME, "--", launch.command, *launch.args])
    config = json.dumps({"mcpServers": {NAME: _entry(launch)}})
    return shlex.join(["claude", "--strict-mcp-config", "--mcp-config", config, "--allowedTools", _allowed(launch)])


def _toml(value: object) -> str:
    return json.dumps(value)  # JSON strings and arrays of strings are valid TOML


def _codex_where(launch: Launch) -> list[tuple[str, object]]:
    if launch.url is not None:
        return [("url", launch.url), ("bearer_token_env_var", TOKEN_VARIABLE)]
    return [("command", launch.command), ("args", list(launch.args))]


def _codex_toml(launch: Launch) -> str:
    lines = [f"[mcp_servers.{NAME}]", *(f"{key} = {_toml(value)}" for key, value in _codex_where(launch))]
    if launch.role == "executor":
        lines += [f"enabled_tools = {_toml(list(ROLE_TOOLS['executor']))}", ""]
        lines += [f"[mcp_servers.{NAME}.tools.write_report]", 'approval_mode = "approve"']
    return "\n".join(lines) + "\n"


def codex_args(launch: Launch) -> list[str]:
    pairs = _codex_where(launch)
    if launch.role == "executor":
        pairs += [("enabled_tools", list(ROLE_TOOLS["executor"])), ("tools.write_report.approval_mode", "approve")]
    return [item for key, value in pairs for item in ("-c", f"mcp_servers.{NAME}.{key}={_toml(value)}")]


def render(launch: Launch, client: Client) -> str:
    """The configuration text for ``client``, ready to paste or pipe."""
    if client == "claude-code":
        return _mcp_json(launch) + "\n"
    token = f"export {TOKEN_VARIABLE}={shlex.quote(launch.token)}\n" if launch.token else ""
    if client == "codex":
        return _codex_toml(launch) + (f"# and in the executor's environment:\n# {token}" if token else "")
    if client == "codex-args":
        return (
            token + shlex.join(["codex", *codex_args(launch), *(["exec"] if launch.role == "executor" else [])]) + "\n"
        )
    # claude-code-cli, and the workers Herdr and Orca start: a Claude Code launch line.
    return _claude_line(launch) + "\n"

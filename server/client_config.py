"""MCP client configurations that work as printed: ``handoff-mcp config`` and ``create_task``'s
``executor_config`` are this one renderer.

Every form names the server by absolute command path and absolute roots (a client started in
another directory, a worktree or under Codex, which passes no ``HANDOFF_*`` variables, still
reaches the same state root). A worker's forms load only this server (``--strict-mcp-config``)
and allow only the executor's tools; Codex gets ``approval_mode = "approve"`` for
``write_report``, which a headless ``codex exec`` needs to call a writing tool.

An executor's forms for a task (``--ref``) also wire in ``handoff-mcp guard`` as a PreToolUse hook:
Claude Code's launch line carries it in ``--settings``, Codex's forms in ``hooks.PreToolUse`` for
``apply_patch``. Codex runs a hook it does not manage only once trusted: reviewed in ``/hooks``, or,
for automation that vets its hooks, ``codex exec --dangerously-bypass-hook-trust``.

From the team server (``--url``), an executor's forms carry the same guard, run where the executor
works: ``handoff-mcp guard --url URL --ref REF --task-sha256 HEX`` reads the task from the team
server with the token the launch exports as ``HANDOFF_TOKEN`` and judges paths in the executor's
clone; the launch lines first install the clone's pre-commit hook, which asks the same way.
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


ROLE_VARIABLE = "HANDOFF_ROLE"  # set to executor on every executor launch line: `handoff-mcp token` refuses there
TOKEN_VARIABLE = "HANDOFF_TOKEN"  # noqa: S105 - a variable name. Where a Codex executor keeps its bearer token (never in config.toml)


@dataclass(kw_only=True, frozen=True)
class Launch:
    """How a client reaches this server: an absolute command and its arguments (stdio), or a URL and a
    bearer token (the HTTP team server)."""

    command: str
    args: tuple[str, ...]
    role: Role
    note: str | None = None  # a warning about the command path, for the person reading the output
    url: str | None = None
    token: str | None = None
    guard: tuple[str, ...] = ()  # the PreToolUse hook command of an executor's task, if any


CLAUDE_EDIT_TOOLS = "Write|Edit|MultiEdit|NotebookEdit"
CODEX_PATCH_TOOL = "^apply_patch$"
CODEX_TRUST_FLAG = "--dangerously-bypass-hook-trust"
CODEX_TRUST_NOTE = (
    f"# Codex runs this hook only once trusted: review it in /hooks, or headless: codex exec {CODEX_TRUST_FLAG}"
)


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


def launch_for(settings: Settings, role: Role, command: str | None = None, ref: str | None = None) -> Launch:
    found, note = (command, None) if command else server_command()
    roots = ["--project-root", str(settings.project_root), "--state-root", str(settings.state_root)]
    args = ["serve", "--role", role, *roots]
    if role == "lead":
        args += ["--secret-file", str(settings.secret_file)]
    guard = (found, "guard", "--ref", ref, *roots) if ref and role == "executor" else ()
    return Launch(command=found, args=tuple(args), role=role, note=note, guard=guard)


def http_launch(role: Role, url: str, token: str, ref: str | None = None, task_sha256: str | None = None) -> Launch:
    """A team-server launch; an executor's task (its ref and pinned TASK sha256) adds the guard, which
    runs where the executor works and reads the task from ``url``, not from a tree."""
    remote = ("--ref", ref, "--url", url, "--task-sha256", task_sha256) if ref and task_sha256 else ()
    guard = ("handoff-mcp", "guard", *remote) if remote and role == "executor" else ()
    return Launch(command="", args=(), role=role, url=url, token=token, guard=guard)


def _remote_setup(launch: Launch) -> list[str]:
    """Shell lines a launch from the team server runs first: the token where the hooks find it, and the
    clone's pre-commit hook (the guard asking the team server at commit time)."""
    if launch.url is None or not launch.guard:
        return []
    install = [*launch.guard[:2], "--install-git-hook", *launch.guard[2:]]
    return [f"export {TOKEN_VARIABLE}={shlex.quote(launch.token or '')}", shlex.join(install)]


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
    line = ["claude", "--strict-mcp-config", "--mcp-config", config, "--allowedTools", _allowed(launch)]
    return _as_role(launch, line + (["--settings", claude_settings(launch)] if launch.guard else []))


def _as_role(launch: Launch, line: list[str]) -> str:
    """The launch line, an executor's in the executor role: its shell's `handoff-mcp token` refuses."""
    return shlex.join(["env", f"{ROLE_VARIABLE}=executor", *line] if launch.role == "executor" else line)


def claude_settings(launch: Launch) -> str:
    """Claude Code settings JSON running the guard before every file edit."""
    hook = {"type": "command", "command": shlex.join(launch.guard)}
    return json.dumps({"hooks": {"PreToolUse": [{"matcher": CLAUDE_EDIT_TOOLS, "hooks": [hook]}]}})


def _codex_hooks_value(launch: Launch) -> str:
    """``hooks.PreToolUse`` as one inline TOML value (for ``-c``)."""
    hook = f'{{type = "command", command = {_toml(shlex.join(launch.guard))}}}'
    return f"[{{matcher = {_toml(CODEX_PATCH_TOOL)}, hooks = [{hook}]}}]"


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
    if launch.guard:
        lines += ["", CODEX_TRUST_NOTE, "[[hooks.PreToolUse]]", f"matcher = {_toml(CODEX_PATCH_TOOL)}"]
        lines += ["", "[[hooks.PreToolUse.hooks]]", 'type = "command"', f"command = {_toml(shlex.join(launch.guard))}"]
    return "\n".join(lines) + "\n"


def codex_args(launch: Launch) -> list[str]:
    pairs = _codex_where(launch)
    if launch.role == "executor":
        pairs += [("enabled_tools", list(ROLE_TOOLS["executor"])), ("tools.write_report.approval_mode", "approve")]
    args = [item for key, value in pairs for item in ("-c", f"mcp_servers.{NAME}.{key}={_toml(value)}")]
    return args + (["-c", f"hooks.PreToolUse={_codex_hooks_value(launch)}"] if launch.guard else [])


def render(launch: Launch, client: Client) -> str:
    """The configuration text for ``client``, ready to paste or pipe."""
    if client == "claude-code":
        return _mcp_json(launch) + "\n"
    token = f"export {TOKEN_VARIABLE}={shlex.quote(launch.token)}\n" if launch.token else ""
    setup = "".join(f"{line}\n" for line in _remote_setup(launch)) or token
    if client == "codex":
        where = "".join(f"# {line}\n" for line in setup.splitlines())
        return _codex_toml(launch) + (f"# and in the executor's environment:\n{where}" if setup else "")
    if client == "codex-args":
        run = ["exec", *([CODEX_TRUST_FLAG] if launch.guard else [])] if launch.role == "executor" else []
        return setup + _as_role(launch, ["codex", *codex_args(launch), *run]) + "\n"
    # claude-code-cli, and the workers Herdr and Orca start: a Claude Code launch line.
    return "".join(f"{line}\n" for line in _remote_setup(launch)) + _claude_line(launch) + "\n"

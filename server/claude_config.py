"""Claude Code's forms of a launch: the ``.mcp.json`` entry, the launch line, and the settings that
carry the hooks. A worker's line loads only this server (``--strict-mcp-config``) and allows only the
executor's tools; it carries its hooks in ``--settings`` and pins the session id, so the Lead finds the
executor's log by it. The ``.mcp.json`` form cannot hold hooks, so ``claude_settings`` is printed beside it.
"""

from __future__ import annotations

import json
import shlex

from server.client_config import NAME, HookEvent, Launch, TaskHooks, as_role, hook_command
from server.config import ROLE_TOOLS

__all__ = ["claude_line", "claude_settings", "lead_hooks", "mcp_json", "settings_file"]

CLAUDE_EDIT_TOOLS = "Write|Edit|MultiEdit|NotebookEdit"
CLAUDE_SHELL_TOOL = "Bash"
CLAUDE_PERMISSION_MODE = "acceptEdits"


def _entry(launch: Launch) -> dict[str, object]:
    if launch.url is not None:
        entry: dict[str, object] = {
            "type": "http",
            "url": launch.url,
            "headers": {"Authorization": f"Bearer {launch.token}"},
        }
    else:
        entry = {"type": "stdio", "command": launch.command, "args": list(launch.args)}
    # The Lead's first turn needs its tools: Claude Code starts MCP servers without waiting for them
    # (a headless run waits 2 s) unless a server is alwaysLoad, which it waits for up to its connect
    # timeout (MCP_CONNECT_TIMEOUT_MS, 5 s by default).
    return entry | ({"alwaysLoad": True} if launch.role == "lead" else {})


def mcp_json(launch: Launch) -> str:
    return json.dumps({"mcpServers": {NAME: _entry(launch)}}, indent=2)


def _allowed(launch: Launch) -> str:
    tools = [f"mcp__{NAME}__{tool}" for tool in ROLE_TOOLS[launch.role]]
    return ",".join([*tools, CLAUDE_SHELL_TOOL] if launch.hooks is not None else tools)


def claude_line(launch: Launch, prompt: str | None = None) -> str:
    if launch.role == "lead" and launch.url is None:
        return shlex.join(["claude", "mcp", "add-json", "--scope", "project", NAME, json.dumps(_entry(launch))])
    config = json.dumps({"mcpServers": {NAME: _entry(launch)}})
    line = ["claude", "--strict-mcp-config", "--mcp-config", config, "--allowedTools", _allowed(launch)]
    if launch.hooks is not None:
        # Edits and shell commands run without asking: the guard judges each, the sandbox contains them.
        line += ["--permission-mode", CLAUDE_PERMISSION_MODE, "--settings", claude_settings(launch.hooks)]
        line += ["--session-id", launch.hooks.session_id] if launch.hooks.session_id else []
    line += ["-p", prompt] if prompt is not None else []
    return as_role(launch, line)


def lead_hooks(line: str) -> dict[str, object]:
    """The Lead's own guard as Claude Code settings (a ``hooks`` value)."""
    hook = {"type": "command", "command": line}
    return {"PreToolUse": [{"matcher": CLAUDE_EDIT_TOOLS, "hooks": [hook]}]}


def settings_file(launch: Launch) -> str:
    """``.claude/settings.local.json`` for a client of this server: the project's server approved (a
    ``.mcp.json`` server waits for approval otherwise), and the hooks its role runs."""
    settings: dict[str, object] = {"enabledMcpjsonServers": [NAME]}
    if launch.lead_guard is not None:
        settings["hooks"] = lead_hooks(launch.lead_guard)
    elif launch.hooks is not None:
        settings |= json.loads(claude_settings(launch.hooks))
    return json.dumps(settings, indent=2) + "\n"


def claude_settings(hooks: TaskHooks) -> str:
    """Claude Code settings JSON: the guard before every file edit and shell command, the shell-write
    check after every shell command, and the stop check."""

    def run(event: HookEvent) -> list[dict[str, str]]:
        return [{"type": "command", "command": hook_command(hooks, event, "claude-code")}]

    return json.dumps(
        {
            "hooks": {
                "PreToolUse": [{"matcher": f"{CLAUDE_EDIT_TOOLS}|{CLAUDE_SHELL_TOOL}", "hooks": run("pre-tool")}],
                "PostToolUse": [{"matcher": CLAUDE_SHELL_TOOL, "hooks": run("post-tool")}],
                "Stop": [{"hooks": run("stop")}],
            }
        }
    )

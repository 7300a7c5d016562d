"""MCP client configurations that work as printed: ``handoff-mcp config`` and ``create_task``'s
``executor_config`` are this one renderer, of a launch (``client_config``) in each client's form
(``claude_config``, ``codex_config``)."""

from __future__ import annotations

import shlex

from server import claude_config as claude
from server import codex_config as codex
from server.client_config import TOKEN_VARIABLE, Client, Launch, remote_setup

__all__ = ["commands", "render"]


def render(launch: Launch, client: Client) -> str:
    """The configuration text for ``client``, ready to paste or pipe."""
    if client == "claude-code":
        return claude.mcp_json(launch) + "\n"
    if client == "claude-code-settings":
        return claude.settings_file(launch)
    token = f"export {TOKEN_VARIABLE}={shlex.quote(launch.token)}\n" if launch.token else ""
    setup = "".join(f"{line}\n" for line in remote_setup(launch)) or token
    if client == "codex":
        where = "".join(f"# {line}\n" for line in setup.splitlines())
        lead = f"\n{codex.CODEX_LEAD_TRUST_NOTE}\n{codex.lead_hooks(launch.lead_guard)}\n" if launch.lead_guard else ""
        return codex.config_toml(launch) + lead + (f"# and in the executor's environment:\n{where}" if setup else "")
    if client == "codex-args":
        return setup + codex.codex_line(launch) + "\n"
    # claude-code-cli, and the workers Herdr and Orca start: a Claude Code launch line.
    return "".join(f"{line}\n" for line in remote_setup(launch)) + claude.claude_line(launch) + "\n"


def commands(launch: Launch, prompt: str) -> tuple[str, str]:
    """An executor's whole headless run for Claude Code and for Codex, the prompt in it, shell-quoted:
    each line, pasted as it is, runs the task (a launch from the team server sets up first)."""
    setup = "".join(f"{line}\n" for line in remote_setup(launch))
    return setup + claude.claude_line(launch, prompt), setup + codex.codex_line(launch, prompt)

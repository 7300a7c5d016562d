"""The dispatch message a Lead hands to an executor, and the executor's MCP configuration."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from handoff_core.services.store import StoredFile
from server.config import Settings
from server.models import ExecutorConfig

__all__ = ["dispatch_message", "executor_config"]


def server_command() -> str:
    """The installed ``handoff-mcp`` beside this interpreter, else whatever PATH finds."""
    beside = Path(sys.executable).parent / "handoff-mcp"
    return str(beside) if beside.exists() else (shutil.which("handoff-mcp") or "handoff-mcp")


def executor_config(settings: Settings) -> ExecutorConfig:
    command, args = server_command(), settings.serve_args("executor")
    claude = {"mcpServers": {"handoff": {"command": command, "args": args}}}
    toml_args = ", ".join(json.dumps(arg) for arg in args)
    return ExecutorConfig(
        claude_code_mcp_json=json.dumps(claude),
        codex_args=[
            "-c",
            f"mcp_servers.handoff.command={json.dumps(command)}",
            "-c",
            f"mcp_servers.handoff.args=[{toml_args}]",
        ],
        codex_config_toml=f"[mcp_servers.handoff]\ncommand = {json.dumps(command)}\nargs = [{toml_args}]\n",
    )


def dispatch_message(stored: StoredFile, token: str, task_rel: str, report_rel: str) -> str:
    ref = stored.ref
    call = json.dumps({"ref": str(ref), "token": token, "task_sha256": stored.sha256})
    return "\n".join(
        [
            f"You are the executor of handoff task {ref}.",
            f"1. Read the task: {task_rel} (sha256 {stored.sha256}), or call read_task with ref {ref}.",
            "2. Do only what it asks, within its Workspace and Scope.",
            "3. Publish your report once with the handoff MCP tool write_report, using these arguments plus "
            "status, focused (3-5 sentences), artifacts, verification, unverified and problems:",
            f"   {call}",
            "4. Then reply with exactly one line:",
            f"   {ref.session}/{ref.task} · <Status> · {report_rel} · <one-sentence summary>",
        ]
    )

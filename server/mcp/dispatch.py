"""The dispatch message a Lead hands to an executor, and the executor's MCP configuration."""

from __future__ import annotations

import json
from pathlib import Path

from handoff_core.contract.scope import read_scope
from handoff_core.layout import FOCUSED_LENGTH
from handoff_core.services.writing.store import StoredFile
from handoff_core.services.writing.workspaces import push_target
from server.claude_config import claude_settings
from server.client_config import ExecutorTask, http_launch, launch_for
from server.client_forms import commands, render
from server.codex_config import codex_args
from server.config import Settings
from server.mcp.models import ExecutorConfig

__all__ = ["dispatch_message", "executor_config"]


def executor_config(
    settings: Settings,
    url: str | None = None,
    token: str | None = None,
    task: ExecutorTask | None = None,
    prompt: str | None = None,
) -> ExecutorConfig:
    """What ``handoff-mcp config --role executor [--ref REF]`` prints for each client: this server's
    project over stdio, or, from the HTTP team server, its executor endpoint with the task's token as
    bearer; with the task's hooks either way (from the team server they run ``handoff-mcp`` where the
    executor works, which finds the roots there)."""
    launch = http_launch("executor", url, token or "", task) if url else launch_for(settings, "executor", task=task)
    claude, codex = commands(launch, prompt) if prompt is not None else ("", "")
    return ExecutorConfig(
        claude_code_command=claude,
        codex_command=codex,
        claude_code_mcp_json=render(launch, "claude-code"),
        claude_code_settings=claude_settings(launch.hooks) if launch.hooks is not None else "",
        claude_code_cli=render(launch, "claude-code-cli").strip(),
        codex_config_toml=render(launch, "codex"),
        codex_args=codex_args(launch),
        warning=launch.note or "",
    )


def dispatch_message(
    stored: StoredFile, token: str, task_rel: str, report_rel: str, project: Path | None = None
) -> str:
    """What the Lead hands the executor; a branch task's message names where to push (``push_target``)."""
    ref = stored.ref
    call = json.dumps({"ref": str(ref), "token": token, "task_sha256": stored.sha256})
    scope = read_scope(stored.text)
    push_to = push_target(project, scope) if project is not None and scope is not None else ""
    commit = (
        [f"   In {scope.worktree}, commit your work and pass source_checkpoint: the commit id (git rev-parse HEAD)."]
        if scope is not None and scope.worktree
        else []
    )
    if scope is not None and push_to:
        commit = [
            f"   In your clone, commit on {push_to} (from {scope.base}), push it there, and pass "
            "source_checkpoint: the pushed commit id (git rev-parse HEAD)."
        ]
    return "\n".join(
        [
            f"You are the executor of handoff task {ref}.",
            f"1. Read the task: {task_rel} (sha256 {stored.sha256}), or call read_task with ref {ref}.",
            "2. Do only what it asks, within its Workspace and Scope.",
            "3. Publish your report once with the handoff MCP tool write_report, using these arguments plus "
            f"status, focused ({FOCUSED_LENGTH}), artifacts, verification, unverified and problems:",
            f"   {call}",
            *commit,
            "4. Then reply with exactly one line:",
            f"   {ref.session}/{ref.task} · <Status> · {report_rel} · <one-sentence summary>",
        ]
    )

"""``handoff-mcp config``, ``token`` and ``coordination``: what wires a project's clients and agents to the server."""

from __future__ import annotations

import json
import os
import sys

from handoff_core.contract.ids import parse_ref
from handoff_core.contract.values import visible
from handoff_core.errors import ConfigError, HandoffError
from handoff_core.services.capabilities.tokens import executor_session_id, lead_token, load_secret, reprinted_token
from handoff_core.services.project.coordination_setup import plan_choice, save_choice
from server.claude_config import claude_settings
from server.client_config import Client, ExecutorTask, Launch, http_launch, launch_for
from server.client_forms import render
from server.config import Settings
from server.mcp.services import open_store

__all__ = ["config", "coordination", "token"]


def token(settings: Settings, ref: str | None, lead: bool) -> int:
    if settings.role != "lead" or os.environ.get("HANDOFF_ROLE") == "executor":  # the flag does not undo the launch
        raise ConfigError(
            "token prints a task's report token, which only the Lead hands out; this shell is configured "
            "as executor (--role or HANDOFF_ROLE): run it where the Lead works"
        )
    if lead:
        print(lead_token(load_secret(settings.secret_file, settings.project_root, create=False), settings.state_root))
        return 0
    if ref is None:
        raise ConfigError("name a task (token CHANGE/SESSION/TASK), or ask for the Lead's token with --lead")
    parsed = parse_ref(ref)
    task, _ = open_store(settings).queries.read_task(parsed)
    secret_file, roots = settings.secret_file, (settings.project_root, settings.state_root)
    print(reprinted_token(secret_file, *roots, parsed, task.token_check))
    print(visible(f"handoff-mcp: derived from the secret {secret_file}"), file=sys.stderr)
    return 0


LEAD_SETTINGS = (
    "the Lead's own guard (an executor's held paths are not the Lead's to edit) and the server's approval: "
    "handoff-mcp config --role lead --client claude-code-settings > .claude/settings.local.json"
)
PROJECT_APPROVAL = (
    'a project server (.mcp.json, or claude mcp add-json --scope project) stays "Pending approval" until you approve '
    "it: start claude in the project and accept handoff (or approve it in /mcp), or add "
    '"enabledMcpjsonServers": ["handoff"] to .claude/settings.local.json; --scope local needs no approval'
)


def _executor_task(settings: Settings, ref: str, token: str | None) -> tuple[ExecutorTask, str | None]:
    """The published TASK's sha256, the session id to pin and the report token the launch line carries:
    from the token given, else from the Lead's secret (this side may not hold it: then the line pins no
    session id and carries no token, and says so)."""
    parsed = parse_ref(ref)
    task, stored = open_store(settings).queries.read_task(parsed)
    if not token:
        roots = (settings.project_root, settings.state_root)
        try:
            token = reprinted_token(settings.secret_file, *roots, parsed, task.token_check)
        except HandoffError as exc:
            note = (
                f"no session id is pinned and no report token set ({exc.message}); the Lead records the executor's "
                "log path by hand, and the executor's own commits in the main tree need HANDOFF_TOKEN set"
            )
            return ExecutorTask(str(parsed), stored.sha256), note
    return ExecutorTask(str(parsed), stored.sha256, executor_session_id(token), token), None


def _hooks_note(launch: Launch, client: Client) -> str | None:
    if launch.hooks is None or client != "claude-code":
        return None
    return (
        ".mcp.json holds no hooks: save the task's hooks as .claude/settings.local.json where the executor "
        f"works, or pass them with --settings: {claude_settings(launch.hooks)}"
    )


def config(
    settings: Settings, client: Client, command: str | None, url: str | None, token: str | None, ref: str | None = None
) -> int:
    if url is not None and not token:
        raise ConfigError("--url needs --token: the task's report token for an executor, the Lead token for the Lead")
    task, pinned = (None, None)
    if ref is not None and settings.role == "executor" and url:
        sha = _served_sha(settings, url, token or "", ref)
        task = ExecutorTask(str(parse_ref(ref)), sha, executor_session_id(token or "")) if sha else None
    elif ref is not None and settings.role == "executor":
        task, pinned = _executor_task(settings, ref, token)
    elif ref is not None:
        parse_ref(ref)
    if url:
        launch = http_launch(settings.role, url, token or "", task, printed_here=True)
    else:
        launch = launch_for(settings, settings.role, command, task)
    print(render(launch, client), end="")
    trust = "Codex runs the hooks only once trusted (/hooks), or headless with exec --dangerously-bypass-hook-trust"
    codex = trust if launch.guard and client.startswith("codex") else None
    for note in (settings.note, launch.note, codex, pinned, _hooks_note(launch, client)):
        if note:
            print(f"handoff-mcp: {note}", file=sys.stderr)
    if client in ("claude-code", "claude-code-cli") and settings.role == "lead" and url is None:
        print(f"handoff-mcp: {PROJECT_APPROVAL}", file=sys.stderr)
        print(f"handoff-mcp: {LEAD_SETTINGS}", file=sys.stderr)
    return 0


def _served_sha(settings: Settings, url: str, token: str, ref: str | None) -> str | None:
    """The sha256 of the TASK the team server serves, for an executor's guard to pin: where the executor
    works there is no tree to read it from."""
    if ref is None or settings.role != "executor":
        return None
    import hashlib

    from handoff_core.services.evidence.team_task import fetch_task

    return hashlib.sha256(fetch_task(url, token, ref)).hexdigest()


def coordination(settings: Settings, mode: str, skills_dir: str | None, dry_run: bool = False) -> int:
    plan = plan_choice(settings.state_root, mode, skills_dir)
    if dry_run:  # the seed's plan: the choice and the expected file, nothing written
        print(visible(f"would {'save' if plan.changed else 'reuse'} {plan.path}:"))
        print(visible(plan.candidate.decode()), end="")
        return 0
    saved = save_choice(settings.state_root, settings.project_root, plan)
    print(visible(f"{saved.outcome} {saved.path}: {json.dumps(saved.defaults)}"))
    if saved.skill != "not needed":
        print(visible(f"skill {saved.defaults['guide']}: {saved.skill}"))
    if saved.next_step:
        print(visible(f"to install it: {saved.next_step} (nothing was installed)"))
    return 0

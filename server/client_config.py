"""How a client reaches this server, the one source of every printed configuration (``client_forms``):
a launch names the server by absolute command path and absolute roots (a client started in another
directory, a worktree or under Codex, which passes no ``HANDOFF_*`` variables, still reaches the same
state root), or by the team server's URL and a bearer token.

An executor's launch for a task (``--ref``) also carries its hooks: ``handoff-mcp guard`` before a tool
runs (``pre-tool``: file edits and shell commands), after a shell command (``post-tool``: what it
wrote) and when the agent would stop (``stop``), and the sandbox that starts the agent CLI. From the
team server (``--url``) the hooks run where the executor works: ``handoff-mcp guard --url URL --ref
REF --task-sha256 HEX …`` reads the task from the team server with the token the launch exports as
``HANDOFF_TOKEN`` and judges paths in the executor's clone; the launch lines first install the clone's
pre-commit hook, which asks the same way (``remote_setup``).
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, NamedTuple, get_args

from handoff_core.layout import REF_VARIABLE, TOKEN_VARIABLE
from server.config import Role, Settings

__all__ = [
    "CLIENTS",
    "HOOK_EVENTS",
    "NAME",
    "TOKEN_VARIABLE",
    "Client",
    "ExecutorTask",
    "HookEvent",
    "Launch",
    "TaskHooks",
    "as_role",
    "hook_command",
    "hook_entry",
    "http_launch",
    "launch_for",
    "remote_setup",
    "sandbox_entry",
    "server_command",
]

Client = Literal["claude-code", "claude-code-settings", "claude-code-cli", "codex", "codex-args", "herdr", "orca"]
CLIENTS: tuple[Client, ...] = get_args(Client)
NAME = "handoff"
_UV_CACHE_MARKS = ("/uv/archive-v", "/uv/builds-v", "/.cache/uv/")


ROLE_VARIABLE = "HANDOFF_ROLE"  # set to executor on every executor launch line: `handoff-mcp token` refuses there


HookEvent = Literal["pre-tool", "post-tool", "stop"]
HOOK_EVENTS: tuple[HookEvent, ...] = get_args(HookEvent)
HookClient = Literal["claude-code", "codex"]


class ExecutorTask(NamedTuple):
    """The task an executor's launch is for: its ref, its TASK's sha256, and the session id to pin and
    its report token (None when this side cannot derive them: no report token nor the Lead's secret)."""

    ref: str
    task_sha256: str
    session_id: str | None = None
    token: str | None = None


@dataclass(kw_only=True, frozen=True)
class TaskHooks:
    """What an executor's hooks need of its task: the guard command with its roots, the ref, the TASK's
    sha256 (the guard refuses a TASK that changed), and the session id a Claude Code launch pins; and
    the sandbox that starts the CLI, contained by what the TASK grants."""

    guard: tuple[str, ...]  # the command and its roots: ``handoff-mcp guard --project-root P --state-root S``
    ref: str
    task_sha256: str
    session_id: str | None = None
    sandbox: tuple[str, ...] = ()  # the launch's command and its roots: ``handoff-mcp sandbox …``, without the task
    token: str | None = None  # what the main tree's pre-commit hook asks of a commit naming this task

    def contained(self, command: list[str]) -> list[str]:
        """``command`` started through the sandbox, for this task."""
        task = ["--ref", self.ref, "--task-sha256", self.task_sha256]
        return [*self.sandbox, *task, "--", *command] if self.sandbox else command


def hook_command(hooks: TaskHooks, event: HookEvent, client: HookClient) -> str:
    """The one rendering of a hook's command line, for every client and event."""
    task = ["--ref", hooks.ref, "--task-sha256", hooks.task_sha256]
    return shlex.join([*hooks.guard, *task, "--event", event, "--client", client])


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
    hooks: TaskHooks | None = None  # an executor's task: its hooks, and the session id to pin
    lead_guard: str | None = None  # the Lead's own guard (``guard --lead``) as a hook's command line

    @property
    def guard(self) -> bool:
        return self.hooks is not None


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


def sandbox_entry() -> tuple[str, ...]:
    """How a printed launch starts the sandbox: this interpreter, isolated and without ``site``, on
    the sandbox's entry file; containing a launch then costs little more than the interpreter's start
    (``python -m bench --only sandbox``)."""
    from handoff_core.services import containment

    return (sys.executable, "-I", "-S", str(Path(containment.__file__).parent / "sandbox_process.py"))


def hook_entry() -> tuple[str, ...]:
    """How a printed hook starts the guard: this interpreter, isolated and without ``site`` (``-I -S``),
    on the hook's own entry file; the hook then costs little more than the interpreter's start
    (``python -m bench --only hooks``). Every printed hook command begins with this."""
    from handoff_core.services import evidence

    return (sys.executable, "-I", "-S", str(Path(evidence.__file__).parent / "hook_process.py"))


def launch_for(
    settings: Settings,
    role: Role,
    command: str | None = None,
    task: ExecutorTask | None = None,
) -> Launch:
    """A stdio launch; an executor's ``task`` (ref, TASK sha256, session id) adds its hooks."""
    found, note = (command, None) if command else server_command()
    roots = ["--project-root", str(settings.project_root), "--state-root", str(settings.state_root)]
    args = ["serve", "--role", role, *roots]
    guard = None
    if role == "lead":
        args += ["--secret-file", str(settings.secret_file)]
        guard = _lead_guard_line(found, settings)
    hooks = None
    if task is not None and role == "executor":
        hooks = TaskHooks(
            guard=(*hook_entry(), *roots),
            ref=task.ref,
            task_sha256=task.task_sha256,
            session_id=task.session_id,
            sandbox=(*sandbox_entry(), *roots, "--secret-file", str(settings.secret_file)),
            token=task.token,
        )
    return Launch(command=found, args=tuple(args), role=role, note=note, hooks=hooks, lead_guard=guard)


def http_launch(
    role: Role, url: str, token: str, task: ExecutorTask | None = None, *, printed_here: bool = False
) -> Launch:
    """A team-server launch; an executor's task adds its hooks, which run where the executor works and
    read the task from ``url`` (pinned by its sha256), not from a tree. Printed on the executor's own
    machine (``printed_here``: ``handoff-mcp config --url`` run there), the hook starts this interpreter
    on the lean entry (``hook_entry``); printed by the team server, which cannot know that machine's
    interpreter, it is the console script."""
    hooks = None
    if task is not None and role == "executor":
        hooks = TaskHooks(
            guard=(*(hook_entry() if printed_here else ("handoff-mcp", "guard")), "--url", url),
            ref=task.ref,
            task_sha256=task.task_sha256,
            session_id=task.session_id,
            sandbox=("handoff-mcp", "sandbox", "--url", url),
        )
    return Launch(command="", args=(), role=role, url=url, token=token, hooks=hooks)


def remote_setup(launch: Launch) -> list[str]:
    """Shell lines a launch from the team server runs first: the token where the hooks find it, and the
    clone's pre-commit hook (the guard asking the team server at commit time)."""
    if launch.url is None or launch.hooks is None:
        return []
    hooks = launch.hooks
    install = ["handoff-mcp", "guard", "--install-git-hook", "--url", launch.url, "--ref", hooks.ref]
    install += ["--task-sha256", hooks.task_sha256]
    return [f"export {TOKEN_VARIABLE}={shlex.quote(launch.token or '')}", shlex.join(install)]


def as_role(launch: Launch, line: list[str]) -> str:
    """The launch line, an executor's in the executor role (its shell's `handoff-mcp token` refuses),
    naming its task and, over stdio, holding its report token (the main tree's pre-commit hook lets that
    task commit the paths it holds on that proof; from the team server the setup lines export it), and
    started through the sandbox its TASK draws."""
    if launch.role != "executor":
        return shlex.join(line)
    hooks = launch.hooks
    if hooks is None:
        return shlex.join(["env", f"{ROLE_VARIABLE}=executor", *line])
    task = [f"{REF_VARIABLE}={hooks.ref}"]
    task += [f"{TOKEN_VARIABLE}={hooks.token}"] if hooks.token and launch.url is None else []
    return shlex.join(["env", f"{ROLE_VARIABLE}=executor", *task, *hooks.contained(line)])


def _lead_guard_line(command: str, settings: Settings) -> str:
    """The Lead's own guard (``guard --lead``), read with the Lead server's secret (a TASK that is not the
    one published holds everything)."""
    roots = ["--project-root", str(settings.project_root), "--state-root", str(settings.state_root)]
    return shlex.join([command, "guard", "--lead", *roots, "--secret-file", str(settings.secret_file)])

"""MCP client configurations that work as printed: ``handoff-mcp config`` and ``create_task``'s
``executor_config`` are this one renderer.

Every form names the server by absolute command path and absolute roots (a client started in
another directory, a worktree or under Codex, which passes no ``HANDOFF_*`` variables, still
reaches the same state root). A worker's forms load only this server (``--strict-mcp-config``)
and allow only the executor's tools; Codex gets ``approval_mode = "approve"`` for
``write_report``, which a headless ``codex exec`` needs to call a writing tool.

An executor's forms for a task (``--ref``) also wire in ``handoff-mcp guard`` three times: before a
tool runs (``pre-tool``: file edits and shell commands), after a shell command (``post-tool``: what
it wrote) and when the agent would stop (``stop``). Claude Code's launch line carries them in
``--settings`` (and pins the session id, so the Lead finds the executor's log by it); the
``.mcp.json`` form cannot hold hooks, so ``claude_settings`` is printed beside it. Codex's forms
carry them under ``hooks.*``; Codex runs a hook it does not manage only once trusted: reviewed in
``/hooks``, or, for automation that vets its hooks, ``codex exec --dangerously-bypass-hook-trust``.

From the team server (``--url``), an executor's forms carry the same hooks, run where the executor
works: ``handoff-mcp guard --url URL --ref REF --task-sha256 HEX …`` reads the task from the team
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
from typing import Literal, NamedTuple, get_args

from handoff_core.layout import BROKER_VARIABLE, REF_VARIABLE, TOKEN_VARIABLE
from server.config import ROLE_TOOLS, Role, Settings

__all__ = [
    "CLIENTS",
    "HOOK_EVENTS",
    "TOKEN_VARIABLE",
    "Client",
    "ExecutorTask",
    "HookEvent",
    "Launch",
    "TaskHooks",
    "claude_settings",
    "codex_args",
    "codex_exec_flags",
    "codex_line",
    "commands",
    "hook_command",
    "hook_entry",
    "http_launch",
    "launch_for",
    "render",
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


CLAUDE_EDIT_TOOLS = "Write|Edit|MultiEdit|NotebookEdit"
CLAUDE_SHELL_TOOL = "Bash"
CODEX_PATCH_TOOL = "^apply_patch$"
CODEX_SHELL_TOOL = "^Bash$"  # Codex names its shell tools Bash in hook events and matchers
CODEX_TRUST_FLAG = "--dangerously-bypass-hook-trust"
# Codex's own sandbox (bubblewrap: namespaces and mounts) cannot start inside the kernel sandbox, which
# contains Codex and all it starts: the exec line turns Codex's off, as its help says, for a launch
# that is sandboxed outside.
CODEX_OUTER_SANDBOX_FLAG = "--dangerously-bypass-approvals-and-sandbox"
CLAUDE_PERMISSION_MODE = "acceptEdits"
CODEX_LEAD_TRUST_NOTE = (
    "# The Lead's own guard. Codex runs it only once trusted: handoff-mcp trust-codex-hooks (or review it in /hooks)"
)
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


def http_launch(role: Role, url: str, token: str, task: ExecutorTask | None = None) -> Launch:
    """A team-server launch; an executor's task adds its hooks, which run where the executor works and
    read the task from ``url`` (pinned by its sha256), not from a tree."""
    hooks = None
    if task is not None and role == "executor":
        hooks = TaskHooks(
            guard=("handoff-mcp", "guard", "--url", url),
            ref=task.ref,
            task_sha256=task.task_sha256,
            session_id=task.session_id,
            sandbox=("handoff-mcp", "sandbox", "--url", url),
        )
    return Launch(command="", args=(), role=role, url=url, token=token, hooks=hooks)


def _remote_setup(launch: Launch) -> list[str]:
    """Shell lines a launch from the team server runs first: the token where the hooks find it, and the
    clone's pre-commit hook (the guard asking the team server at commit time)."""
    if launch.url is None or launch.hooks is None:
        return []
    hooks = launch.hooks
    install = [*hooks.guard[:2], "--install-git-hook", *hooks.guard[2:], "--ref", hooks.ref]
    install += ["--task-sha256", hooks.task_sha256]
    return [f"export {TOKEN_VARIABLE}={shlex.quote(launch.token or '')}", shlex.join(install)]


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


def _mcp_json(launch: Launch) -> str:
    return json.dumps({"mcpServers": {NAME: _entry(launch)}}, indent=2)


def _allowed(launch: Launch) -> str:
    tools = [f"mcp__{NAME}__{tool}" for tool in ROLE_TOOLS[launch.role]]
    return ",".join([*tools, CLAUDE_SHELL_TOOL] if launch.hooks is not None else tools)


def _claude_line(launch: Launch, prompt: str | None = None) -> str:
    if launch.role == "lead" and launch.url is None:
        return shlex.join(["claude", "mcp", "add-json", "--scope", "project", NAME, json.dumps(_entry(launch))])
    config = json.dumps({"mcpServers": {NAME: _entry(launch)}})
    line = ["claude", "--strict-mcp-config", "--mcp-config", config, "--allowedTools", _allowed(launch)]
    if launch.hooks is not None:
        # Edits and shell commands run without asking: the guard judges each, the sandbox contains them.
        line += ["--permission-mode", CLAUDE_PERMISSION_MODE, "--settings", claude_settings(launch.hooks)]
        line += ["--session-id", launch.hooks.session_id] if launch.hooks.session_id else []
    line += ["-p", prompt] if prompt is not None else []
    return _as_role(launch, line)


def _as_role(launch: Launch, line: list[str]) -> str:
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


def _lead_hooks(line: str) -> tuple[dict[str, object], str]:
    """The Lead's own guard as Claude Code settings (a ``hooks`` value) and as Codex ``config.toml`` lines."""
    hook = {"type": "command", "command": line}
    claude: dict[str, object] = {"PreToolUse": [{"matcher": CLAUDE_EDIT_TOOLS, "hooks": [hook]}]}
    codex = "\n".join(
        [
            "[[hooks.PreToolUse]]",
            f"matcher = {_toml(CODEX_PATCH_TOOL)}",
            "",
            "[[hooks.PreToolUse.hooks]]",
            'type = "command"',
            f"command = {_toml(line)}",
        ]
    )
    return claude, codex


def _claude_settings_file(launch: Launch) -> str:
    """``.claude/settings.local.json`` for a client of this server: the project's server approved (a
    ``.mcp.json`` server waits for approval otherwise), and the hooks its role runs."""
    settings: dict[str, object] = {"enabledMcpjsonServers": [NAME]}
    if launch.lead_guard is not None:
        settings["hooks"] = _lead_hooks(launch.lead_guard)[0]
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


# Codex's hook events, the event the guard judges there, and the tools each one matches (None: all).
_CODEX_HOOKS: tuple[tuple[str, HookEvent, str | None], ...] = (
    ("PreToolUse", "pre-tool", f"{CODEX_PATCH_TOOL}|{CODEX_SHELL_TOOL}"),
    ("PostToolUse", "post-tool", CODEX_SHELL_TOOL),
    ("Stop", "stop", None),
)


def _codex_hook_value(hooks: TaskHooks, event: HookEvent, matcher: str | None) -> str:
    """One ``hooks.<Event>`` as an inline TOML value (for ``-c``)."""
    hook = f'{{type = "command", command = {_toml(hook_command(hooks, event, "codex"))}}}'
    match = f"matcher = {_toml(matcher)}, " if matcher else ""
    return f"[{{{match}hooks = [{hook}]}}]"


def _toml(value: object) -> str:
    return json.dumps(value)  # JSON strings and arrays of strings are valid TOML


def _codex_where(launch: Launch) -> list[tuple[str, object]]:
    if launch.url is not None:
        return [("url", launch.url), ("bearer_token_env_var", TOKEN_VARIABLE)]
    # Codex hands a server only the variables it is told of: a sandboxed launch's broker among them.
    forwarded = [("env_vars", [BROKER_VARIABLE])] if launch.hooks is not None else []
    return [("command", launch.command), ("args", list(launch.args)), *forwarded]


def _codex_toml(launch: Launch) -> str:
    lines = [f"[mcp_servers.{NAME}]", *(f"{key} = {_toml(value)}" for key, value in _codex_where(launch))]
    if launch.role == "executor":
        lines += ["required = true"]  # an executor without its server cannot report: Codex waits for it
        lines += [f"enabled_tools = {_toml(list(ROLE_TOOLS['executor']))}", ""]
        lines += [f"[mcp_servers.{NAME}.tools.write_report]", 'approval_mode = "approve"']
    if launch.hooks is not None:
        start = shlex.join(launch.hooks.contained(["codex", *codex_exec_flags(launch), "exec"]))
        lines += ["", f"# start the executor through its task's sandbox: {start}", CODEX_TRUST_NOTE]
        for name, event, matcher in _CODEX_HOOKS:
            lines += [f"[[hooks.{name}]]", *([f"matcher = {_toml(matcher)}"] if matcher else []), ""]
            command = hook_command(launch.hooks, event, "codex")
            lines += [f"[[hooks.{name}.hooks]]", 'type = "command"', f"command = {_toml(command)}", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def codex_args(launch: Launch) -> list[str]:
    pairs = _codex_where(launch)
    if launch.role == "executor":
        pairs += [("required", True), ("enabled_tools", list(ROLE_TOOLS["executor"]))]
        pairs += [("tools.write_report.approval_mode", "approve")]
    args = [item for key, value in pairs for item in ("-c", f"mcp_servers.{NAME}.{key}={_toml(value)}")]
    if launch.hooks is not None:
        for name, event, matcher in _CODEX_HOOKS:
            args += ["-c", f"hooks.{name}={_codex_hook_value(launch.hooks, event, matcher)}"]
        args += codex_exec_flags(launch)
    if launch.lead_guard is not None:  # the Lead's own guard, as its config.toml form carries it
        hook = f'{{type = "command", command = {_toml(launch.lead_guard)}}}'
        args += ["-c", f"hooks.PreToolUse=[{{matcher = {_toml(CODEX_PATCH_TOOL)}, hooks = [{hook}]}}]"]
    return args


def render(launch: Launch, client: Client) -> str:
    """The configuration text for ``client``, ready to paste or pipe."""
    if client == "claude-code":
        return _mcp_json(launch) + "\n"
    if client == "claude-code-settings":
        return _claude_settings_file(launch)
    token = f"export {TOKEN_VARIABLE}={shlex.quote(launch.token)}\n" if launch.token else ""
    setup = "".join(f"{line}\n" for line in _remote_setup(launch)) or token
    if client == "codex":
        where = "".join(f"# {line}\n" for line in setup.splitlines())
        lead = f"\n{CODEX_LEAD_TRUST_NOTE}\n{_lead_hooks(launch.lead_guard)[1]}\n" if launch.lead_guard else ""
        return _codex_toml(launch) + lead + (f"# and in the executor's environment:\n{where}" if setup else "")
    if client == "codex-args":
        return setup + codex_line(launch) + "\n"
    # claude-code-cli, and the workers Herdr and Orca start: a Claude Code launch line.
    return "".join(f"{line}\n" for line in _remote_setup(launch)) + _claude_line(launch) + "\n"


def codex_exec_flags(launch: Launch) -> list[str]:
    """What Codex needs for an executor's task: its hooks run (trusted for this run), and Codex's own
    sandbox off inside the kernel's (both flags of ``codex`` itself, given before ``exec``)."""
    return [CODEX_TRUST_FLAG, CODEX_OUTER_SANDBOX_FLAG] if launch.hooks is not None else []


def codex_line(launch: Launch, prompt: str | None = None) -> str:
    """The ``codex … exec`` launch line, ready to paste; with ``prompt``, the whole headless run."""
    run = ["exec"] if launch.role == "executor" else []
    return _as_role(launch, ["codex", *codex_args(launch), *run, *([prompt] if prompt is not None else [])])


def commands(launch: Launch, prompt: str) -> tuple[str, str]:
    """An executor's whole headless run for Claude Code and for Codex, the prompt in it, shell-quoted:
    each line, pasted as it is, runs the task (a launch from the team server sets up first)."""
    setup = "".join(f"{line}\n" for line in _remote_setup(launch))
    return setup + _claude_line(launch, prompt), setup + codex_line(launch, prompt)

"""Codex's forms of a launch: ``config.toml`` lines, the same as ``-c`` arguments, and the ``codex … exec``
line. An executor's forms enable only its tools, with ``approval_mode = "approve"`` for ``write_report``
(which a headless ``codex exec`` needs to call a writing tool), and carry its hooks under ``hooks.*``;
Codex runs a hook it does not manage only once trusted: reviewed in ``/hooks``, or, for automation that
vets its hooks, ``codex exec --dangerously-bypass-hook-trust``.
"""

from __future__ import annotations

import json
import shlex

from handoff_core.layout import BROKER_VARIABLE, TOKEN_VARIABLE
from server.client_config import NAME, HookEvent, Launch, TaskHooks, as_role, hook_command
from server.config import ROLE_TOOLS

__all__ = ["CODEX_LEAD_TRUST_NOTE", "codex_args", "codex_exec_flags", "codex_line", "config_toml", "lead_hooks"]

CODEX_PATCH_TOOL = "^apply_patch$"
CODEX_SHELL_TOOL = "^Bash$"  # Codex names its shell tools Bash in hook events and matchers
CODEX_TRUST_FLAG = "--dangerously-bypass-hook-trust"
# Codex's own sandbox (bubblewrap: namespaces and mounts) cannot start inside the kernel sandbox, which
# contains Codex and all it starts: the exec line turns Codex's off, as its help says, for a launch
# that is sandboxed outside.
CODEX_OUTER_SANDBOX_FLAG = "--dangerously-bypass-approvals-and-sandbox"
CODEX_LEAD_TRUST_NOTE = (
    "# The Lead's own guard. Codex runs it only once trusted: handoff-mcp trust-codex-hooks (or review it in /hooks)"
)
CODEX_TRUST_NOTE = (
    f"# Codex runs this hook only once trusted: review it in /hooks, or headless: codex exec {CODEX_TRUST_FLAG}"
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


def config_toml(launch: Launch) -> str:
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


def codex_exec_flags(launch: Launch) -> list[str]:
    """What Codex needs for an executor's task: its hooks run (trusted for this run), and Codex's own
    sandbox off inside the kernel's (both flags of ``codex`` itself, given before ``exec``)."""
    return [CODEX_TRUST_FLAG, CODEX_OUTER_SANDBOX_FLAG] if launch.hooks is not None else []


def codex_line(launch: Launch, prompt: str | None = None) -> str:
    """The ``codex … exec`` launch line, ready to paste; with ``prompt``, the whole headless run."""
    run = ["exec"] if launch.role == "executor" else []
    return as_role(launch, ["codex", *codex_args(launch), *run, *([prompt] if prompt is not None else [])])


def lead_hooks(line: str) -> str:
    """The Lead's own guard as Codex ``config.toml`` lines."""
    return "\n".join(
        [
            "[[hooks.PreToolUse]]",
            f"matcher = {_toml(CODEX_PATCH_TOOL)}",
            "",
            "[[hooks.PreToolUse.hooks]]",
            'type = "command"',
            f"command = {_toml(line)}",
        ]
    )

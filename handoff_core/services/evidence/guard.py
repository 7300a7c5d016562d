"""The live layer: a PreToolUse hook's event judged before the agent CLI writes.

Claude Code sends ``tool_name`` Write, Edit, MultiEdit or NotebookEdit with an absolute
``tool_input.file_path`` (``notebook_path`` for a notebook); Codex sends ``apply_patch`` with the
whole patch as ``tool_input.command``, whose ``*** Add File:``, ``*** Update File:``, ``*** Delete
File:`` and ``*** Move to:`` headers name the paths (relative to ``cwd``). Every path is resolved
(``..`` and symlinks) and judged by the one scope rule. Anything the guard cannot read — a malformed
event, an unknown ref, an unreadable TASK — is a deny with the reason, never an allow. Other tools
are not judged here: a Bash command that writes is seen only by the audit.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from handoff_core.contract.ids import parse_ref
from handoff_core.contract.task_file import parse_task
from handoff_core.errors import HandoffError, StorageError
from handoff_core.files.task_dir import Roots, open_task_dir
from handoff_core.layout import TASK_FILE
from handoff_core.services.rules.scope_rule import ScopeRule

__all__ = [
    "EDIT_TOOLS",
    "MAX_EVENT_BYTES",
    "PATCH_TOOL",
    "Decision",
    "check_commit",
    "decide",
    "hook_answer",
    "patch_paths",
    "worktree_task",
]

MAX_EVENT_BYTES = 16 * 1024 * 1024  # a patch event carries the whole patch
EDIT_TOOLS = ("Write", "Edit", "MultiEdit", "NotebookEdit")
PATCH_TOOL = "apply_patch"
_HEADERS = ("*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: ")


@dataclass(frozen=True)
class Decision:
    allow: bool
    reason: str = ""


def patch_paths(patch: str) -> list[str]:
    """The paths a Codex patch names in its file headers, moves included."""
    return [line[len(h) :].strip() for line in patch.splitlines() for h in _HEADERS if line.startswith(h)]


def _paths(event: dict[str, object]) -> list[str] | None:
    """The paths the event would write; None when the event is not one the guard can read."""
    tool, given = event.get("tool_name"), event.get("tool_input")
    if not isinstance(given, dict):
        return None
    if tool in EDIT_TOOLS:
        path = given.get("file_path", given.get("notebook_path"))
        return [path] if isinstance(path, str) and path else None
    if tool == PATCH_TOOL:
        patch = given.get("command", given.get("input"))
        return (patch_paths(patch) or None) if isinstance(patch, str) else None
    return []  # not a file-writing tool: nothing for this guard to judge


def _event(data: bytes) -> dict[str, object] | None:
    try:
        event = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(event, dict) or event.get("hook_event_name", "PreToolUse") != "PreToolUse":
        return None
    return event


def _rule(roots: Roots, ref: str) -> ScopeRule:
    """The scope of ``ref`` from one read of its TASK (the store and its caches are not loaded)."""
    try:
        with open_task_dir(roots.state_root, parse_ref(ref), active_only=False) as task_dir:
            data = task_dir.read(TASK_FILE)
    except OSError as exc:
        raise StorageError(f"cannot read the TASK of {ref}: {exc.strerror}") from exc
    task = parse_task(data.decode("utf-8", "replace").removeprefix("\ufeff"))
    resolved = Roots(Path(os.path.realpath(roots.state_root)), Path(os.path.realpath(roots.project_root)))
    return ScopeRule(task, ref, resolved.project_root, resolved.state_root)


RuleOf = Callable[[str], ScopeRule]  # the task's scope rule, given the event's working directory


def decide(data: bytes, ref: str, roots: Roots, rule_of: RuleOf | None = None) -> Decision:
    """Whether the write the event describes may go ahead, for the task ``ref``; ``rule_of`` reads the
    task elsewhere than the local tree (``remote_task``: from the team server)."""
    event = _event(data)
    cwd = event.get("cwd") if event is not None else None
    paths = _paths(event) if event is not None else None
    if event is None or paths is None or not isinstance(cwd, str) or not cwd.startswith("/"):
        return Decision(False, f"handoff guard for {ref}: the hook event is malformed or names no path; denied")
    if not paths:
        return Decision(True)
    try:
        rule = rule_of(cwd) if rule_of is not None else _rule(roots, ref)
    except HandoffError as exc:
        return Decision(False, f"handoff guard for {ref}: cannot read the task ({exc.message}); denied")
    for path in paths:
        resolved = Path(os.path.realpath(os.path.join(cwd, path)))
        if (why := rule.judge(resolved)) is not None:
            return Decision(False, f"handoff task {ref} may not write {resolved}: {why} ({rule.described()})")
    return Decision(True)


def hook_answer(decision: Decision) -> str:
    """What the hook prints on stdout: nothing for an allow (the CLI's own permissions then apply),
    the documented PreToolUse deny form of both Claude Code and Codex otherwise."""
    if decision.allow:
        return ""
    output = {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": decision.reason}
    return json.dumps({"hookSpecificOutput": output})


def worktree_task(roots: Roots, tree: Path) -> str | None:
    """The task whose TASK pins ``tree`` as its worktree — the open one, else the latest — derived from
    the TASKs themselves (a commit is rare: one walk of the tree is its price), so one hook guards
    every task worktree without a record per worktree."""
    from handoff_core.services.tree.queries import Queries  # here: the PreToolUse hook never walks the tree

    here = os.path.realpath(tree)
    named = [
        task
        for task in Queries(roots).status()
        if task.scope is not None and task.scope.worktree and os.path.realpath(task.scope.worktree) == here
    ]
    chosen = [task for task in named if task.outstanding] or named
    return str(max(chosen, key=lambda task: (task.dispatched_at, str(task.ref))).ref) if chosen else None


def check_commit(
    tree: Path, roots: Roots, keep: dict[str, str], rule_of: RuleOf | None = None, ref: str | None = None
) -> tuple[str | None, list[str]]:
    """For a pre-commit hook in ``tree``: the task the worktree works for (None: no task names it) and
    each staged path outside its scope, as ``path: why``; both sides of a staged rename are judged.
    ``rule_of`` and ``ref`` name the task read elsewhere (a clone on another machine)."""
    from handoff_core.files import git, git_hooks  # here: the PreToolUse hook never starts git

    ref = ref or git_hooks.recorded_task(tree, keep) or worktree_task(roots, tree)
    if ref is None:
        return None, []
    try:
        rule = rule_of(str(tree)) if rule_of is not None else _rule(roots, ref)
    except HandoffError as exc:
        return ref, [f"(the task cannot be read: {exc.message})"]
    found = []
    for change in git.staged_paths(tree, keep):
        for side in (change.path, change.old_path):
            if side and (why := rule.judge(f"{tree}/{side}")) is not None:
                found.append(f"{side}: {why}")
    return ref, found

"""A TASK's scope as its text shows it: the list a person reads (opening with ``LIST_START``, after the
notes), then the ``handoff-scope`` block the claim reader reads back (``scope.read_scope``)."""

from __future__ import annotations

from handoff_core.contract.frontmatter import quote
from handoff_core.contract.scope import LINK_KEYS, SCOPE_FENCE

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: handoff-validate never loads it
if TYPE_CHECKING:
    from handoff_core.contract.scope import Scope

__all__ = ["LIST_START", "scope_lines"]

LIST_START = "- Workspace: "


def _globs(values: tuple[str, ...]) -> str:
    return ", ".join(f"`{value}`" for value in values) or "none"


def scope_lines(scope: Scope) -> list[str]:
    shared = ", ".join(f"`{s.path}` (owner: {s.owner})" for s in scope.shared) or "none"
    workspace = scope.workspace or "none (read-only task)"
    block = [SCOPE_FENCE]
    if scope.workspace is not None:
        block.append(f"workspace: {quote(scope.workspace)}")
    block += [
        f"writable: {quote(list(scope.writable))}",
        f"read_only: {quote(list(scope.read_only))}",
        f"shared: {quote([{'path': s.path, 'owner': s.owner} for s in scope.shared])}",
        f"artifacts: {quote(list(scope.artifacts))}",
        *([f"resources: {quote(list(scope.resources))}"] if scope.resources else []),
        *([f"worktree: {quote(scope.worktree)}"] if scope.worktree else []),
        *([f"branch: {quote(scope.branch)}"] if scope.branch else []),
        *([f"remote: {quote(scope.remote)}"] if scope.remote else []),
        *([f"base: {quote(scope.base)}"] if scope.base else []),
        *([f"dirty_at_dispatch: {quote(list(scope.dirty))}"] if scope.dirty else []),
        *([f"authorised_actions: {quote(list(scope.actions))}"] if scope.actions else []),
        *([f"stop_conditions: {quote(list(scope.stop_conditions))}"] if scope.stop_conditions else []),
        *(f"{key}: {quote(value)}" for key, value in _links(scope)),
        *([f"sandbox: {quote(scope.sandbox)}"] if scope.sandbox != "required" else []),
        "```",
    ]
    readable = [
        f"{LIST_START}{workspace}",
        f"- Writable: {_globs(scope.writable)}",
        f"- Read-only: {_globs(scope.read_only)}",
        f"- Shared: {shared}",
        f"- Artifacts: {_globs(scope.artifacts)}",
        *([f"- Resources: {_globs(scope.resources)}"] if scope.resources else []),
        *([f"- Worktree: `{scope.worktree}` on branch `{scope.branch}`"] if scope.worktree else []),
        *([f"- Branch: `{scope.branch}` of the git remote `{scope.remote}`: push it there"] if scope.remote else []),
        *([f"- Base commit: `{scope.base}`"] if scope.base else []),
        *([f"- Dirty at dispatch (not this task's): {_globs(scope.dirty)}"] if scope.dirty else []),
        *([f"- Authorised actions: {_globs(scope.actions)}"] if scope.actions else []),
        *(["- Stop conditions:", *(f"  - {line}" for line in scope.stop_conditions)] if scope.stop_conditions else []),
        *([f"- Retry of: `{scope.retry_of}`"] if scope.retry_of else []),
        *([f"- Review of: `{scope.review_of}` at its checkpoint `{scope.base}`"] if scope.review_of else []),
        *([f"- Written by: {scope.self_writer} itself (claim_writer)"] if scope.self_writer else []),
        *([f"- Sandbox: {_SANDBOX_SAID[scope.sandbox]}"] if scope.sandbox != "required" else []),
        "",
    ]
    return ([scope.notes, ""] if scope.notes else []) + readable + block


_SANDBOX_SAID = {
    "if-available": "if-available (launched unsandboxed where the kernel offers no sandbox)",
    "off": "off (the executor is launched without the kernel sandbox)",
}


def _links(scope: Scope) -> list[tuple[str, str]]:
    return [(key, value) for key in LINK_KEYS if (value := getattr(scope, key))]

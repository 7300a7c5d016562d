"""The commit-time layer: a pre-commit hook's staged paths judged against the task its worktree
works for, before the commit lands (the agent-CLI hooks are ``evidence.hook``).

The task is the one ``--install-git-hook --ref`` recorded in the worktree's own git directory, with
the SHA-256 of its TASK then (a TASK whose bytes differ since refuses every commit); else the one
whose TASK pins the worktree, derived from the TASKs themselves (no pin: the TASK read is trusted).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from handoff_core.files.task_dir import Roots
from handoff_core.services.evidence.task_pin import TaskUnreadable, read_pinned
from handoff_core.services.rules.scope_rule import ScopeRule

__all__ = ["RuleOf", "check_commit", "task_rule", "worktree_task"]

RuleOf = Callable[[str], ScopeRule]  # the task's scope rule, given the working directory (read elsewhere)


def task_rule(roots: Roots, ref: str, pin: str | None) -> ScopeRule:
    """The scope of ``ref`` from one read of its TASK, checked against ``pin`` when given."""
    task = read_pinned(str(roots.state_root), ref, pin)
    project, state = os.path.realpath(roots.project_root), os.path.realpath(roots.state_root)
    return ScopeRule(task.task, ref, project, state)


def worktree_task(roots: Roots, tree: Path) -> str | None:
    """The task whose TASK pins ``tree`` as its worktree — the open one, else the latest — derived from
    the TASKs themselves (a commit is rare: one walk of the tree is its price), so one hook guards
    every task worktree without a record per worktree."""
    from handoff_core.services.tree.queries import Queries  # here: the agent-CLI hook never walks the tree

    here = os.path.realpath(tree)
    named = [
        task
        for task in Queries(roots).status()
        if task.scope is not None and task.scope.worktree and os.path.realpath(task.scope.worktree) == here
    ]
    chosen = [task for task in named if task.outstanding] or named
    return str(max(chosen, key=lambda task: (task.dispatched_at, str(task.ref))).ref) if chosen else None


def _task_of(tree: Path, roots: Roots, keep: dict[str, str]) -> tuple[str, str | None] | None:
    """The task recorded for ``tree`` with its pin, else the one whose TASK pins it (no pin)."""
    from handoff_core.files import git_hooks

    recorded = git_hooks.recorded_task(tree, keep)
    if recorded is None:
        derived = worktree_task(roots, tree)
        recorded = (derived, None) if derived is not None else None
    return recorded


def check_commit(
    tree: Path, roots: Roots, keep: dict[str, str], rule_of: RuleOf | None = None, ref: str | None = None
) -> tuple[str | None, list[str]]:
    """For a pre-commit hook in ``tree``: the task the worktree works for (None: no task names it) and
    each staged path outside its scope, as ``path: why``; both sides of a staged rename are judged.
    ``rule_of`` and ``ref`` name the task read elsewhere (a clone on another machine, pinned there)."""
    from handoff_core.errors import HandoffError
    from handoff_core.files import git

    recorded = (ref, None) if ref is not None else _task_of(tree, roots, keep)
    if recorded is None:
        return None, []
    ref, pin = recorded
    try:
        rule = rule_of(str(tree)) if rule_of is not None else task_rule(roots, ref, pin)
    except TaskUnreadable as exc:
        return ref, [f"(the task cannot be used: {exc})"]
    except HandoffError as exc:
        return ref, [f"(the task cannot be read: {exc.message})"]
    found = []
    for change in git.staged_paths(tree, keep):
        for side in (change.path, change.old_path):
            if side and (why := rule.judge(f"{tree}/{side}")) is not None:
                found.append(f"{side}: {why}")
    return ref, found

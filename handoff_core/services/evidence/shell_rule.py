"""A shell command judged before it runs: the git actions it takes against the TASK's authorised
actions, and what ``git add`` would stage against the scope.

A TASK lists the actions it authorises (``authorised_actions`` in its scope block); a TASK that lists none
authorises ``commit`` in its own worktree (the dispatch asks for a committed checkpoint there) and
nothing else. ``git add`` of a path outside the scope is a ``stage-outside-scope``; ``git add -A``,
``.``, a folder or a pathspec with magic is one too while the tree holds a change outside the scope
(one ``git status``, paid only for such a command). A command this cannot split is not guessed at. Stdlib only.
"""

from __future__ import annotations

import os

from handoff_core.services.evidence.git_actions import git_steps
from handoff_core.services.evidence.hook_call import ALLOW, Decision

TYPE_CHECKING = False
if TYPE_CHECKING:
    from handoff_core.services.evidence.git_actions import GitStep
    from handoff_core.services.evidence.hook_call import Hook
    from handoff_core.services.evidence.hook_event import Event

__all__ = ["authorised_for", "judge_command"]


def authorised_for(hook: Hook) -> frozenset[str]:
    return hook.task().in_effect


def _changed_outside(hook: Hook) -> list[str]:
    """The task tree's changed paths outside the scope now (those dirty at dispatch aside)."""
    from handoff_core.services.evidence.tree_status import changed_paths

    rule = hook.rule()
    dirty_then = set(hook.task().task.scope.dirty)
    return [p for _, p in changed_paths(rule.root_text) if p not in dirty_then and rule.judge_relative(p) is not None]


def _staging(hook: Hook, step: GitStep) -> str | None:
    """Why this ``git add`` may stage outside the scope; None when every path it can stage is inside.
    A pathspec that may stage everything (``-A``, ``.``, a folder, magic) is judged by what the tree
    holds changed now: one ``git status``, paid only for such a command."""
    rule = hook.rule()
    broad = step.stages_all or not step.paths
    for path in step.paths:
        resolved = os.path.realpath(os.path.join(step.cwd, path))
        if os.path.isdir(resolved):
            broad = True
        elif (why := rule.judge(resolved)) is not None:
            return f"{resolved}: {why} ({rule.described()})"
    if broad and (outside := _changed_outside(hook)):
        shown = ", ".join(outside[:10]) + (" …" if len(outside) > 10 else "")  # noqa: PLR2004 - a short list
        return f"it would stage changes outside the task's scope ({shown}); put them back or stage files by name"
    return None


def judge_command(hook: Hook, event: Event) -> Decision:
    assert event.command is not None
    steps = git_steps(event.command, event.cwd)
    if not steps:  # no git here, or a command not read (the post-tool check sees what it changed)
        return ALLOW
    authorised = authorised_for(hook)
    shown = ", ".join(sorted(authorised)) or "none"
    for step in steps:
        words = " ".join(["git", *step.words])[:200]
        if step.action == "stage":
            if "stage-outside-scope" in authorised or (why := _staging(hook, step)) is None:
                continue
            return Decision(False, f"{hook.who}: `{words}` is denied: {why}")
        if step.action not in authorised:
            return Decision(
                False,
                f"{hook.who}: `{words}` is a {step.action}, which the TASK does not authorise "
                f"(authorised actions: {shown}); ask the Lead if the task needs it",
            )
    return ALLOW

"""A shell command judged before it runs: the git actions it takes against the TASK's authorised
actions, and what ``git add`` would stage against the scope.

A TASK lists the actions it authorises (``authorised_actions`` in its scope block); a TASK that lists none
authorises ``commit`` in its own worktree (the dispatch asks for a committed checkpoint there) and
nothing else. ``git add`` of a path outside the scope is a ``stage-outside-scope``; ``git add -A``,
``.``, a folder or a pathspec with magic may stage anything, so it needs that action too (name the
files instead). A command this cannot split is not guessed at. Stdlib only.
"""

from __future__ import annotations

import os

from handoff_core.services.evidence.git_actions import git_steps

TYPE_CHECKING = False
if TYPE_CHECKING:
    from handoff_core.services.evidence.git_actions import GitStep
    from handoff_core.services.evidence.hook import Hook, Verdict
    from handoff_core.services.evidence.hook_event import Event

__all__ = ["authorised_for", "judge_command"]


def authorised_for(hook: Hook) -> frozenset[str]:
    task = hook.task()
    if task.authorised:
        return task.authorised
    return frozenset({"commit"}) if task.task.scope.worktree else frozenset()


def _staging(hook: Hook, step: GitStep) -> str | None:
    """Why this ``git add`` may stage outside the scope; None when every path it names is inside."""
    if step.stages_all or not step.paths:
        return "it may stage every changed path; stage the files by name (git add PATH …)"
    rule = hook.rule()
    for path in step.paths:
        resolved = os.path.realpath(os.path.join(step.cwd, path))
        if os.path.isdir(resolved):
            return f"{path} is a folder, which may hold paths outside the scope; stage the files by name"
        if (why := rule.judge(resolved)) is not None:
            return f"{resolved}: {why} ({rule.described()})"
    return None


def judge_command(hook: Hook, event: Event) -> Verdict:
    from handoff_core.services.evidence.hook import ALLOW, Verdict

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
            return Verdict(False, f"{hook.who}: `{words}` is denied: {why}")
        if step.action not in authorised:
            return Verdict(
                False,
                f"{hook.who}: `{words}` is a {step.action}, which the TASK does not authorise "
                f"(authorised actions: {shown}); ask the Lead if the task needs it",
            )
    return ALLOW

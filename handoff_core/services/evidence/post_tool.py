"""After a shell command: the task tree's changes compared with the scope, and the agent told at
once which paths lie outside it and how to put each back.

The tree is the task's root (its worktree, or the project for a ``current`` task), read with one
``git status``. Paths the TASK records as dirty at dispatch are not the executor's. A shell command
can write anywhere; this sees the task's tree only (the audit sees the rest after the work).
"""

from __future__ import annotations

from handoff_core.services.evidence.hook_event import SHELL_TOOLS
from handoff_core.services.evidence.tree_status import StatusFailed, StatusRefused, changed_paths

TYPE_CHECKING = False
if TYPE_CHECKING:
    from handoff_core.services.evidence.hook import Hook, Verdict
    from handoff_core.services.evidence.hook_event import Event

__all__ = ["judge_after_shell", "put_back"]


def put_back(status: str, path: str) -> str:
    """The command that undoes one change: a new file removed, anything else restored from HEAD."""
    import shlex  # here: only a report of paths to put back pays for it

    quoted = shlex.quote(path)
    if status == "?":
        return f"rm -- {quoted}"
    if status == "A":
        return f"git rm -f -- {quoted}"
    return f"git restore --staged --worktree --source=HEAD -- {quoted}"


def judge_after_shell(hook: Hook, event: Event) -> Verdict:
    from handoff_core.services.evidence.hook import ALLOW, SHOWN_PATHS, Verdict

    if event.tool not in SHELL_TOOLS:
        return ALLOW  # the pre-tool check judged what this tool named
    rule = hook.rule()
    dirty_then = set(hook.task().task.scope.dirty)
    try:
        changed = changed_paths(rule.root_text)
    except StatusRefused as exc:
        return Verdict(False, f"{hook.who}: cannot check what the command changed: {exc}")
    except StatusFailed as exc:
        return Verdict(False, f"{hook.who}: cannot check what the command changed ({exc}); run git status yourself")
    outside = [
        (status, path)
        for status, path in changed
        if path not in dirty_then and rule.judge_relative(path.rstrip("/")) is not None
    ]
    if not outside:
        return ALLOW
    lines = [f"  {path}: {put_back(status, path)}" for status, path in outside[:SHOWN_PATHS]]
    more = [f"  … and {len(outside) - SHOWN_PATHS} more (git status)"] if len(outside) > SHOWN_PATHS else []
    return Verdict(
        False,
        "\n".join(
            [
                f"{hook.who}: the last command changed paths outside the task's scope ({rule.described()}) "
                f"in {rule.root_text}. Put them back now (run in that folder):",
                *lines,
                *more,
            ]
        ),
    )

"""After a shell command: the task tree's changes compared with the scope, git's ``HEAD`` compared
with the actions the TASK authorises, and the other trees' changes made while the command ran; the
agent told at once what it did and how to put each back.

The tree is the task's root (its worktree, or the project for a ``current`` task), read with one
``git status``. Paths the TASK records as dirty at dispatch are not the executor's. ``HEAD`` is read
from git's files (``git_records``; git itself only for a form they cannot be read in): a worktree's
off its branch needs ``switch-branch``, and one that left the base needs ``commit`` (a commit by any
command moves it). The other trees of the repository (the main tree, every linked worktree) are
read with one ``git status`` each, outside the sandbox (inside it, the kernel refuses every write
there), and what changed there since the command started is named (``crossings``). A push or a
reflog entry is for the audit to read.
"""

from __future__ import annotations

import os

from handoff_core.services.evidence.hook_call import ALLOW, Decision
from handoff_core.services.evidence.hook_event import SHELL_TOOLS
from handoff_core.services.evidence.tree_status import Running, StatusFailed, StatusRefused, start_status

TYPE_CHECKING = False
if TYPE_CHECKING:
    from handoff_core.services.evidence.hook_call import Hook
    from handoff_core.services.evidence.hook_event import Event
    from handoff_core.services.rules.scope_rule import ScopeLike, ScopeRule

__all__ = ["SHOWN_PATHS", "head_moves", "judge_after_shell", "put_back"]

SHOWN_PATHS = 20  # the changes a deny lists by name; the rest are counted


def put_back(status: str, path: str) -> str:
    """The command that undoes one change: a new file removed, anything else restored from HEAD."""
    import shlex  # here: only a report of paths to put back pays for it

    quoted = shlex.quote(path)
    if status == "?":
        return f"rm -- {quoted}"
    if status == "A":
        return f"git rm -f -- {quoted}"
    return f"git restore --staged --worktree --source=HEAD -- {quoted}"


def _head(top: str) -> tuple[str | None, str | None]:
    """``(branch ref, commit)`` of ``top``'s ``HEAD``, from git's files where they read plainly."""
    from handoff_core.files.git_config import git_dirs
    from handoff_core.files.git_records import head_of, ref_oid

    dirs = git_dirs(os.fsencode(top))
    head = head_of(dirs[0]) if dirs is not None else None
    if dirs is not None and head is not None:
        if head.ref is None:
            return None, head.oid
        if (oid := ref_oid(dirs[1], head.ref)) is not None:
            return head.ref, oid
    from handoff_core.services.evidence.tree_status import head_by_git

    return head_by_git(top)


def head_moves(top: str, scope: ScopeLike, allowed: frozenset[str]) -> list[str]:
    """What ``HEAD`` of the task's tree ``top`` shows that the TASK does not authorise."""
    needs_branch = bool(scope.worktree) and "switch-branch" not in allowed
    if not needs_branch and ("commit" in allowed or not scope.base):
        return []  # nothing to read: one file read spared on every command
    ref, oid = _head(top)
    found = []
    if needs_branch and ref != f"refs/heads/{scope.branch}":
        shown = (ref or "").removeprefix("refs/heads/") or f"a detached HEAD ({(oid or '')[:12]})"
        found.append(f"  HEAD: {shown} is checked out, not the task's branch {scope.branch} (switch-branch)")
    if "commit" not in allowed and scope.base and oid != scope.base:
        found.append(
            f"  HEAD is at {(oid or 'no commit')[:12]}, not {scope.base[:12]} where the task was dispatched: a "
            f"commit (commit), by whatever command; undo it with `git reset --soft {scope.base}`"
        )
    return found


_UNMARKED = (
    "the start of the last command was not recorded (is the pre-tool hook set for this shell tool?): what "
    "it changed in the other trees of the repository cannot be told"
)


def _read_trees(hook: Hook, event: Event, rule: ScopeRule) -> tuple[list[tuple[str, str]], list[str], str]:
    """The task tree's changed paths; each path of another tree that changed while the command ran
    (recorded for the audit), and why they could not be told. The trees' git statuses run side by side:
    the hook runs after every shell command, and each status is a process to wait for."""
    from handoff_core.services.evidence import crossings

    sandboxed = os.environ.get("HANDOFF_SANDBOX_WRITE") is not None  # layout.WRITABLE_VARIABLE: no other tree
    start = None if sandboxed else crossings.started(hook.ref, event.data)
    own = start_status(rule.root_text)
    others: list[tuple[str, Running]] = []
    try:
        others = crossings.start_others(rule) if start is not None else []
        changed = own.paths()
        found = (
            crossings.written_since(rule, start, event.command or "", event.cwd, others) if start is not None else []
        )
    finally:
        for running in (own, *(started for _, started in others)):
            running.drop()
    if start is None:
        return changed, [], "" if sandboxed else _UNMARKED
    if hook.url is None:
        crossings.record(hook.state_root, found)
    return changed, [f"  {c.where}: (cd {c.tree} && {put_back(c.status, c.path)})" for c in found], ""


def judge_after_shell(hook: Hook, event: Event) -> Decision:
    if event.tool not in SHELL_TOOLS:
        return ALLOW  # the pre-tool check judged what this tool named
    rule, pinned = hook.rule(), hook.task()
    dirty_then = set(pinned.task.scope.dirty)
    try:
        changed, crossed, unknown = _read_trees(hook, event, rule)
    except StatusRefused as exc:
        return Decision(False, f"{hook.who}: cannot check what the command changed: {exc}")
    except StatusFailed as exc:
        return Decision(False, f"{hook.who}: cannot check what the command changed ({exc}); run git status yourself")
    outside = [
        (status, path)
        for status, path in changed
        if path not in dirty_then and rule.judge_relative(path.rstrip("/")) is not None
    ]
    moved = head_moves(rule.root_text, pinned.task.scope, pinned.in_effect)
    if not (outside or moved or crossed or unknown):
        return ALLOW
    lines = []
    if outside:
        lines += [
            f"{hook.who}: the last command changed paths outside the task's scope ({rule.described()}) "
            f"in {rule.root_text}. Put them back now (run in that folder):",
            *[f"  {path}: {put_back(status, path)}" for status, path in outside[:SHOWN_PATHS]],
            *([f"  … and {len(outside) - SHOWN_PATHS} more (git status)"] if len(outside) > SHOWN_PATHS else []),
        ]
    if moved:
        shown = ", ".join(sorted(pinned.in_effect)) or "none"
        lines += [f"{hook.who}: git shows what the TASK does not authorise (authorised actions: {shown}):", *moved]
    if crossed:
        lines += [
            f"{hook.who}: paths in other trees changed while the last command ran; a task writes only in its "
            "own tree. If the command wrote them, put them back now:",
            *crossed[:SHOWN_PATHS],
            *([f"  … and {len(crossed) - SHOWN_PATHS} more"] if len(crossed) > SHOWN_PATHS else []),
        ]
    if unknown:
        lines.append(f"{hook.who}: {unknown}")
    return Decision(False, "\n".join(lines))

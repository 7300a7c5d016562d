"""Pinning a task's workspace at dispatch: which linked worktree and branch, and from which commit.

A ``required`` implementation task (or a read-only one) given a worktree must name a linked
worktree of this repository with that branch checked out; the TASK then records the branch tip
as the base its audit starts from. A ``required`` task given a branch and no worktree works on
another machine and pushes that branch to the project's git remote: the base is the branch's tip
there, or, for a new branch, the Lead's ``HEAD``, which the remote must already hold.
A ``current`` task in a repository records ``HEAD`` and the
paths already dirty, so that they are never blamed on its executor; one that records neither (outside
git, or in a repository with no commit) is dispatched with a warning: its audit cannot judge it.
"""

from __future__ import annotations

import os
from pathlib import Path

from handoff_core.contract.scope import MAX_DIRTY, Scope
from handoff_core.errors import GitError, WorkspaceRefused
from handoff_core.files import git, git_process, git_remote
from handoff_core.layout import Kind
from handoff_core.services.evidence.audit import audited

__all__ = ["no_base_warning", "pin_workspace", "push_target"]

_HEADS = "refs/heads/"


def _linked(project: Path, worktree: str, branch: str) -> str:
    """The tip of ``branch`` when ``worktree`` is a linked worktree of ``project``'s repository on it."""
    if git.work_tree_of(Path(os.path.realpath(project))) is None:
        raise WorkspaceRefused(f"the project {project} is not a git repository: a worktree task needs one")
    trees = git.worktrees(project)
    wanted = os.path.realpath(worktree)
    linked = [tree for tree in trees[1:] if os.path.realpath(tree.path) == wanted]
    listing = ", ".join(f"{t.path} ({(t.branch or 'detached').removeprefix(_HEADS)})" for t in trees[1:]) or "none"
    if not linked:
        raise WorkspaceRefused(
            f"{worktree} is not a linked worktree of this repository (linked: {listing}); "
            f"make one with `git worktree add {worktree} -b {branch}` and dispatch again"
        )
    if linked[0].branch != _HEADS + branch or linked[0].head is None:
        found = (linked[0].branch or "a detached HEAD").removeprefix(_HEADS)
        raise WorkspaceRefused(
            f"{worktree} has {found} checked out, not {branch}; check out {branch} there or name its branch"
        )
    return linked[0].head


def _inside(path: Path, top: Path) -> str | None:
    return path.relative_to(top).as_posix() if path.is_relative_to(top) else None


def _remote(top: Path, named: str) -> str:
    found = git.remotes(top)
    if named or "origin" in found or len(found) != 1:
        if (named or "origin") not in found:
            raise WorkspaceRefused(
                f"the repository has no git remote {named or 'origin'} (remotes: {', '.join(found) or 'none'}); "
                "add the remote the executor pushes to (git remote add origin URL) and dispatch again"
            )
        return named or "origin"
    return found[0]


def _pushed(project: Path, scope: Scope) -> Scope:
    """A branch that lives on the git remote: its tip there, else the Lead's HEAD, which the remote holds."""
    top = git.work_tree_of(Path(os.path.realpath(project)))
    if top is None:
        raise WorkspaceRefused(f"the project {project} is not a git repository: a branch task needs one")
    remote = _printable(_remote(top, scope.remote), "the git remote's name")
    base = git_remote.remote_tip(top, remote, scope.branch)
    if base is None:
        base = git.rev_parse(top, "HEAD")
        if base is None or not git.on_remote(top, remote, base):
            raise WorkspaceRefused(
                f"branch {scope.branch} is not on {remote}, and {remote} does not hold HEAD ({base or 'no commit'}) "
                f"to start it from: push first (git push {remote} HEAD), or push the branch, and dispatch again"
            )
    return scope._replace(remote=remote, base=base)


def _printable(name: str, what: str) -> str:
    """A name from the repository, refused unless it is one printable line: a TASK never gains a line
    (an instruction, a code fence) from a file name; escaping it would record a path git does not have."""
    if not name.isprintable():
        raise WorkspaceRefused(
            f"{what} {name!r} holds a line break or another control character, which a TASK cannot "
            "record: rename or remove it (git status shows it), then dispatch again"
        )
    return name


def pin_workspace(project: Path, state_root: Path, kind: Kind, scope: Scope) -> Scope:
    """``scope`` with its base (and a current task's dirty paths) read from git now; the handoff tree's
    own files are the server's, never counted dirty. Every name git gives must be printable."""
    if scope.branch and not scope.worktree:
        return _pushed(project, scope)
    if scope.worktree:
        resolved = _printable(os.path.realpath(scope.worktree), "the worktree's resolved path")
        tip = _linked(project, scope.worktree, scope.branch)
        # A review stays at the fixed checkpoint it was given, wherever the branch has gone since.
        return scope._replace(worktree=resolved, base=scope.base if scope.review_of else tip)
    top = git.work_tree_of(Path(os.path.realpath(project)))
    if kind != "implementation" or scope.workspace != "current" or top is None:
        return scope
    head = git.rev_parse(project, "HEAD")
    handoff = _inside(Path(os.path.realpath(state_root)), top)
    sides = {side for change in git.dirty_paths(project) for side in (change.path, change.old_path) if side}
    dirty = sorted(side for side in sides if handoff is None or not f"{side}/".startswith(f"{handoff}/"))
    for path in dirty[:MAX_DIRTY]:
        _printable(path, "the path dirty at dispatch")
    return scope._replace(base=head or "", dirty=tuple(dirty[:MAX_DIRTY]))


def no_base_warning(project: Path, kind: Kind, scope: Scope) -> str | None:
    """What a ``current`` implementation task pinned with nothing to judge it by lacks, and what to do;
    None when its audit can judge it (``audit.audited``)."""
    if kind != "implementation" or scope.workspace != "current" or audited(scope):
        return None
    where = (
        f"{project} is in no git repository"
        if git.work_tree_of(Path(os.path.realpath(project))) is None
        else f"the repository at {project} has no commit"
    )
    return (
        f"the task has no git base: {where}, so the audit cannot judge what its executor changes. Run "
        "`git init` and commit the project (git add -A && git commit), then dispatch the next task"
    )


def push_target(project: Path, scope: Scope) -> str:
    """Where the executor of a branch task pushes: the branch and the remote's URL (any credentials in
    it left out); empty for a task that has no branch on a remote."""
    if not scope.remote:
        return ""
    try:
        _, out = git_process.run(Path(os.path.realpath(project)), "remote", "get-url", "--", scope.remote)
    except GitError:
        return f"branch {scope.branch} of the git remote {scope.remote}"
    url = out.decode("utf-8", "replace").strip()
    if "://" in url and "@" in url.split("://", 1)[1].split("/", 1)[0]:
        scheme, rest = url.split("://", 1)
        url = f"{scheme}://{rest.split('@', 1)[1]}"
    return f"branch {scope.branch} of the git remote {scope.remote} ({url})"

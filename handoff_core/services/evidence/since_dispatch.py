"""What changed in the project tree since a ``current`` task was dispatched, from git: the commits
since the ``HEAD`` its TASK recorded (every commit, when there was none then) and what is
uncommitted now, less the paths already dirty at dispatch (their change since cannot be told from
the one before) and the handoff tree (the server's files). A path dirty at dispatch and clean now
changed since: it counts. The tree is shared: none of it is attributed to one writer here.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

from handoff_core.contract.scope import MAX_DIRTY
from handoff_core.files import git, git_process

__all__ = ["Since", "since_dispatch"]

NO_GIT = (
    "the TASK records no base commit and no path dirty at dispatch: it was dispatched outside git (or in a "
    "repository with neither a commit nor a file), so nothing marks what changed since"
)
UNSEEN = "dirty at dispatch, and changed now: a change since cannot be told from the one before"
CUT = f"uncommitted, and the TASK lists only the first {MAX_DIRTY} paths dirty at dispatch: it may be one of them"


class Since(NamedTuple):
    changes: list[git_process.Change]  # committed since dispatch
    dirty: list[git_process.Change]  # uncommitted now, not dirty at dispatch
    undone: list[git_process.Change]  # dirty at dispatch, clean now
    unseen: list[tuple[str, str]]  # (path, why) whose change since cannot be seen
    problem: str = ""  # why nothing can be judged; "" when the rest holds


def _committed(top: Path, base: str, head: str | None) -> tuple[list[git_process.Change], str]:
    """The commits since ``base`` (every file of ``HEAD`` when there was no commit at dispatch)."""
    if not base:
        if head is None:
            return [], ""
        _, out = git_process.run(top, "ls-tree", "-r", "-z", "--name-only", "--full-tree", head, "--")
        return [
            git_process.Change("A", name) for name in out.decode("utf-8", "surrogateescape").split("\0") if name
        ], ""
    if head is None:
        return [], f"HEAD names no commit now (it was {base} at dispatch)"
    descends = git.is_ancestor(top, base, head)
    if descends is None:
        return [], f"the base {base} is not a commit of this repository"
    if not descends:
        return [], f"HEAD ({head}) does not descend from the base {base}: history moved under the task"
    return git.changes(top, base, head), ""


def _outside(handoff: str | None, change: git_process.Change) -> bool:
    """Whether no side of ``change`` lies in the handoff tree (its files are the server's)."""
    sides = [side for side in (change.path, change.old_path) if side]
    return handoff is None or not any(f"{side}/".startswith(f"{handoff}/") for side in sides)


def since_dispatch(top: Path, base: str, dirty_then: tuple[str, ...], handoff: str | None) -> Since:
    """The changes in the work tree ``top`` since dispatch; ``handoff``: the handoff tree's place in it."""
    if not base and not dirty_then:
        return Since([], [], [], [], NO_GIT)
    head = git.rev_parse(top, "HEAD")
    changes, problem = _committed(top, base, head)
    now = [change for change in git.dirty_paths(top) if _outside(handoff, change)]
    changes = [change for change in changes if _outside(handoff, change)]
    then = set(dirty_then)
    unseen: list[git_process.Change] = []
    judged: list[git_process.Change] = []
    for change in [*changes, *now]:
        sides = {side for side in (change.path, change.old_path) if side}
        (unseen if sides <= then else judged).append(change)
    seen = {side for change in [*changes, *now] for side in (change.path, change.old_path) if side}
    undone = [git_process.Change("M", path) for path in sorted(then - seen)] if not problem else []
    cut = len(dirty_then) >= MAX_DIRTY
    left = [c for c in judged if c in now and cut]
    return Since(
        changes=[c for c in judged if c in changes],
        dirty=[c for c in judged if c in now and not cut],
        undone=undone,
        unseen=[(c.path, UNSEEN) for c in unseen] + [(c.path, CUT) for c in left],
        problem=problem,
    )


def handoff_in(top: Path, state_root: str) -> str | None:
    """The handoff tree's place in the work tree ``top`` (posix, relative), or None when outside it."""
    relative = os.path.relpath(os.path.realpath(state_root), os.path.realpath(top))
    return None if relative == ".." or relative.startswith("../") else relative.replace(os.sep, "/")

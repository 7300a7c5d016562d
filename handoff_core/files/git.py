"""Git's answers the evidence reads (a task's change, discovery, a work tree's state), each from a
git run the one way git runs here (``git_process``: a fixed environment, its own process group,
bounded, ``-z`` output parsed) or, for a work tree's state, from our own index (``work_tree``).
The one git that reaches a remote is ``files.git_remote``'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from handoff_core.files.git_config import work_tree_top
from handoff_core.files.git_process import (
    KEPT,
    MAX_OUTPUT,
    TIMEOUT,
    Change,
    Running,
    fields,
    name_status,
    planted,
    results,
    run,
    start,
)
from handoff_core.files.work_tree import commit_of, state

__all__ = [
    "KEPT",
    "MAX_OUTPUT",
    "TIMEOUT",
    "Change",
    "Evidence",
    "Running",
    "Worktree",
    "changes",
    "dirty_paths",
    "evidence",
    "is_ancestor",
    "on_remote",
    "planted",
    "remotes",
    "results",
    "rev_parse",
    "run",
    "staged_paths",
    "start",
    "toplevel",
    "work_tree_of",
    "worktrees",
]

_NO_SUCH_COMMIT = 128  # git merge-base --is-ancestor: a name that is no commit (0 yes, 1 no)


class Worktree(NamedTuple):
    path: str
    head: str | None
    branch: str | None  # refs/heads/NAME, None when detached or bare


def work_tree_of(path: Path) -> Path | None:
    """The top of the work tree ``path`` lies in — the nearest folder holding ``.git`` — found by a stat
    per level, no git process: a dispatch outside any repository pays nothing for the evidence."""
    top = work_tree_top(str(path))
    return None if top is None else Path(top)


def toplevel(cwd: Path) -> Path | None:
    """The work tree ``cwd`` lies in, or None outside any repository."""
    code, out = run(cwd, "rev-parse", "--show-toplevel", ok=(0, 128))
    return Path(out.decode("utf-8", "surrogateescape").strip()) if code == 0 else None


def rev_parse(cwd: Path, rev: str) -> str | None:
    """The full object name of the commit ``rev`` names, or None when there is none."""
    code, out = run(cwd, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}", ok=(0, 1, 128))
    return out.decode().strip() if code == 0 else None


def _ancestry(cwd: Path, ancestor: str, descendant: str) -> Running:
    return start(cwd, "merge-base", "--is-ancestor", ancestor, descendant, ok=(0, 1, _NO_SUCH_COMMIT))


def _descends(code: int) -> bool | None:
    return None if code == _NO_SUCH_COMMIT else code == 0


def is_ancestor(cwd: Path, ancestor: str, descendant: str) -> bool | None:
    """Whether ``descendant`` descends from ``ancestor``; None when either is not a commit here."""
    return _descends(_ancestry(cwd, ancestor, descendant).result()[0])


def worktrees(cwd: Path) -> list[Worktree]:
    """Every work tree of the repository ``cwd`` belongs to, the main one first."""
    _, out = run(cwd, "worktree", "list", "--porcelain", "-z")
    found: list[Worktree] = []
    record: dict[str, str] = {}
    for field in [*fields(out), ""]:
        if field:
            key, _, value = field.partition(" ")
            record[key] = value
        elif record:
            branch = record.get("branch")
            found.append(Worktree(record.get("worktree", ""), record.get("HEAD"), branch))
            record = {}
    return found


_DIFF = ("diff", "--name-status", "-z", "-M", "--no-ext-diff", "--no-textconv", "--ignore-submodules=none")


def changes(cwd: Path, base: str, checkpoint: str) -> list[Change]:
    """Every path changed from ``base`` to ``checkpoint``: renames and copies with both sides, deletions,
    mode and submodule changes (``git diff --name-status``, nothing ignored)."""
    return name_status(start(cwd, *_DIFF, base, checkpoint, "--").result()[1])


def _reading(cwd: Path) -> tuple[Path, Running]:
    """The work tree ``cwd`` lies in — the folder holding ``.git``: git is told so by ``GIT_WORK_TREE``,
    whatever a ``core.worktree`` says — and its ``HEAD`` being read."""
    tree = work_tree_of(cwd) or cwd
    return tree, start(tree, "rev-parse", "--verify", "--quiet", "HEAD", ok=(0, 1, 128))


def dirty_paths(cwd: Path) -> list[Change]:
    """What is uncommitted or untracked in the work tree (ignored files aside), both sides of a staged rename."""
    tree, head = _reading(cwd)
    try:
        keep = planted(tree) | {"GIT_WORK_TREE": str(tree)}
    finally:
        now = commit_of(head.result())
    return state(tree, now, keep)


class Evidence(NamedTuple):
    descends: bool | None  # None: the base or the checkpoint is not a commit here
    changes: list[Change]
    dirty: list[Change]
    head: str | None = None  # the work tree's HEAD commit now


def evidence(cwd: Path, base: str, checkpoint: str) -> Evidence:
    """Ancestry, the change from base to checkpoint, the work tree's HEAD and what differs from it;
    git processes run at once where they can (an audit waits for the slowest, not for their sum)."""
    tree, head = _reading(cwd)
    started = (head, _ancestry(cwd, base, checkpoint), start(cwd, *_DIFF, base, checkpoint, "--", ok=(0, 128)))
    try:
        keep = planted(tree) | {"GIT_WORK_TREE": str(tree)}
    finally:
        now, (code, _), (diff_code, diff) = results(*started)
    dirty = state(tree, commit_of(now), keep)
    if _descends(code) is not True or diff_code != 0:
        return Evidence(_descends(code), [], dirty, commit_of(now))
    return Evidence(True, name_status(diff), dirty, commit_of(now))


def staged_paths(cwd: Path, keep: Mapping[str, str] | None = None) -> list[Change]:
    """What the next commit would change against HEAD (the index), for a pre-commit hook; with no commit
    yet (an unborn branch), ``git diff --cached`` shows every staged path."""
    _, out = run(cwd, "diff", "--cached", "--name-status", "-z", "-M", "--no-ext-diff", "--", keep=keep)
    return name_status(out)


def remotes(cwd: Path) -> list[str]:
    """The names of the repository's git remotes."""
    return [name for name in run(cwd, "remote")[1].decode("utf-8", "replace").splitlines() if name]


def on_remote(cwd: Path, remote: str, commit: str) -> bool:
    """Whether a remote-tracking branch of ``remote`` (as last fetched) holds ``commit``."""
    _, out = run(
        cwd, "for-each-ref", "--count=1", f"--contains={commit}", "--format=%(refname)", f"refs/remotes/{remote}/"
    )
    return bool(out.strip())

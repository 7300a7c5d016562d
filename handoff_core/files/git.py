"""Git's answers the evidence reads (a task's change, discovery, a work tree's state), each from a
git run the one way git runs here (``git_process``: a fixed environment, its own process group,
bounded, ``-z`` output parsed) or, for a work tree's state, from our own index (``work_tree``).
The one git that reaches a remote is ``files.git_remote``'s.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import NamedTuple

from handoff_core.files import git_objects, git_records
from handoff_core.files.git_config import git_dirs, work_tree_top
from handoff_core.files.git_process import Change, Running, fields, name_status, planted, results, run, start
from handoff_core.files.work_tree import commit_of, state

__all__ = [
    "Evidence",
    "Worktree",
    "changes",
    "dirty_paths",
    "evidence",
    "is_ancestor",
    "on_remote",
    "remotes",
    "rev_parse",
    "staged_paths",
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


def _head_of(tree: Path) -> str | None:
    """The commit ``HEAD`` names, read from the files git reads (``git_records``: the ``HEAD`` the next
    git reads), no process; None when unsure (or unborn): git is asked."""
    dirs = git_dirs(os.fsencode(tree))
    head = None if dirs is None else git_records.head_of(dirs[0])
    if dirs is None or head is None or (head.ref is not None and not head.ref.startswith("refs/heads/")):
        return None
    return head.oid if head.ref is None else git_records.ref_oid(dirs[1], head.ref)


def _reading(cwd: Path) -> tuple[Path, str | None, Running | None]:
    """The work tree ``cwd`` lies in — the folder holding ``.git``: git is told so by ``GIT_WORK_TREE``,
    whatever a ``core.worktree`` says — and its ``HEAD``: read here, or else being read by git."""
    tree = work_tree_of(cwd) or cwd
    known = _head_of(tree)
    return tree, known, None if known else start(tree, "rev-parse", "--verify", "--quiet", "HEAD", ok=(0, 1, 128))


def dirty_paths(cwd: Path) -> list[Change]:
    """What is uncommitted or untracked in the work tree (ignored files aside), both sides of a staged rename."""
    tree, known, head = _reading(cwd)
    try:
        keep = planted(tree) | {"GIT_WORK_TREE": str(tree)}
    finally:
        now = known or (commit_of(head.result()) if head else None)
    return state(tree, now, keep)


class Evidence(NamedTuple):
    descends: bool | None  # None: the base or the checkpoint is not a commit here
    changes: list[Change]
    dirty: list[Change]
    head: str | None = None  # the work tree's HEAD commit now
    # The commits from the base to the checkpoint, each with its parents (``rev-list --parents``); None
    # when git could not list them (what asked for them says so).
    lineage: list[list[str]] | None = None


def _lineage(cwd: Path, base: str, checkpoint: str) -> Running:
    """The commits of ``base..checkpoint`` with their parents, and the boundary: the base among them
    (a line ``-base``) proves that the checkpoint descends from it. Both peeled to commits, as
    ``merge-base`` peels them; a name that is no commit fails (128)."""
    return start(cwd, "rev-list", "--parents", "--boundary", f"{checkpoint}^{{commit}}", "--not", f"{base}^{{commit}}",
                 ok=(0, 128))  # fmt: skip


def _read_lineage(
    cwd: Path, base: str, checkpoint: str, said: tuple[int, bytes]
) -> tuple[bool | None, list[list[str]] | None]:
    """Ancestry and the commits, from ``_lineage``'s answer ``said``: proven by the boundary, or by the
    base being the checkpoint; anything else (no boundary at the base, a failure) is ``merge-base``'s
    answer (a tag's id as the base, a repository git walks only in part), the commits then unlisted
    when ``rev-list`` failed."""
    code, out = said
    lines = [line.split() for line in out.decode().splitlines() if line] if code == 0 else None
    if lines is not None and (base == checkpoint or any(line[0] == f"-{base}" for line in lines)):
        return True, [line for line in lines if not line[0].startswith("-")]
    descends = _descends(_ancestry(cwd, base, checkpoint).result()[0])
    return descends, None if lines is None else [line for line in lines if not line[0].startswith("-")]


def evidence(cwd: Path, base: str, checkpoint: str, judge: Callable[[list[Change]], None] | None = None) -> Evidence:
    """Ancestry, the change from base to checkpoint, the work tree's HEAD and what differs from it;
    the commits from the base to a checkpoint on a line of loose commits read from their objects
    (``git_objects``), else listed by git; git processes run at once where they can (an audit waits
    for the slowest, not for their sum): with
    ``HEAD`` read from its files, the work tree is read while the change is, and the change is read —
    and handed to ``judge`` when the checkpoint descends from the base — while the work tree's git runs."""
    tree, known, head = _reading(cwd)
    dirs = git_dirs(os.fsencode(tree))
    line = None if dirs is None else git_objects.line_of(dirs[1], base, checkpoint)  # else rev-list is asked
    started = (
        start(cwd, *_DIFF, base, checkpoint, "--", ok=(0, 128)),
        *([_lineage(cwd, base, checkpoint)] if line is None else []),
    )
    said: list[tuple[bool | None, list[Change], list[list[str]] | None]] = []

    def read() -> None:
        outs = results(*started)
        descends, lineage = (True, line) if line is not None else _read_lineage(cwd, base, checkpoint, outs[1])
        if descends is not True or outs[0][0] != 0:
            said.append((descends, [], None))
            return
        said.append((True, name_status(outs[0][1]), lineage))
        judge(said[0][1]) if judge is not None else None

    dirty = None
    try:
        keep = planted(tree) | {"GIT_WORK_TREE": str(tree)}
        dirty = state(tree, known, keep, read) if known else None
    finally:
        outs = results(*started, *([head] if head else []))  # each read once: this reaps what is left
    now = known or commit_of(outs[-1])
    dirty = dirty if dirty is not None else state(tree, now, keep, read)
    descends, changes, lineage = said[0]
    return Evidence(descends, changes, dirty, now, lineage)


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

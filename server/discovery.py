"""One state root per project, found the same way from anywhere in it.

Without ``--project-root``, the project is found from the working directory: the nearest
directory up the tree that holds the state root; else, inside git, the repository's top level.
A linked worktree (Orca gives each worker one; a ``required`` workspace is one) is not a second
project: its handoff tree is a stale checkout, so the Lead's tree, found through
``git rev-parse --git-common-dir``, is used when it holds the state root, and the choice is said.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from handoff_core.errors import GitError
from handoff_core.files import git_process
from handoff_core.layout import DEFAULT_STATE_ROOT

__all__ = ["Found", "find_project", "lead_tree_of"]


@dataclass(frozen=True)
class Found:
    project: Path
    note: str | None = None  # why this is not simply the working directory
    in_git: bool = True  # False: git finds no repository there (a dispatch records no base)


def _git(cwd: Path, *args: str) -> str | None:
    """An absolute path ``git rev-parse`` names, as the user's own git would find it; None outside git.

    A location query, so the user's configuration stands (``safe.directory`` among it)."""
    try:
        code, out = git_process.run(cwd, "rev-parse", "--path-format=absolute", *args, ok=(0, 128), user_config=True)
    except GitError:
        return None
    text = out.decode("utf-8", "surrogateescape").strip()
    return text if code == 0 and text else None


def _holds_state(directory: Path, state_root: Path) -> bool:
    return (state_root if state_root.is_absolute() else directory / state_root).is_dir()


def _lead_tree(top: Path) -> Path | None:
    """The main working tree when ``top`` is a linked worktree of it."""
    common = _git(top, "--git-common-dir")
    if common is None or Path(common).name != ".git":
        return None
    main = Path(common).parent
    return main if main.resolve() != top.resolve() else None


def lead_tree_of(project: Path, state_root: Path = Path(DEFAULT_STATE_ROOT)) -> Found:
    """A project root named explicitly, unless it is a linked worktree of the tree that holds the state."""
    top_text = _git(project, "--show-toplevel")
    if top_text is None:
        return Found(project, in_git=False)
    is_top = Path(top_text).resolve() == project.resolve()
    lead = _lead_tree(project) if is_top and not state_root.is_absolute() else None
    if lead is not None and _holds_state(lead, state_root):
        return Found(
            lead, f"{project} is a linked worktree; using the Lead's tree {lead}, which holds the handoff tree"
        )
    return Found(project)


def find_project(cwd: Path, state_root: Path = Path(DEFAULT_STATE_ROOT)) -> Found:
    """The project whose state root this working directory belongs to."""
    cwd = cwd.absolute()
    top_text = _git(cwd, "--show-toplevel")
    top = Path(top_text) if top_text else None
    if top is not None and (lead := _lead_tree(top)) is not None and _holds_state(lead, state_root):
        return Found(lead, f"{top} is a linked worktree; using the Lead's tree {lead}, which holds the handoff tree")
    for directory in (cwd, *cwd.parents):
        if _holds_state(directory, state_root):
            note = None if directory == cwd else f"found the handoff tree above {cwd}"
            return Found(directory, note, in_git=top is not None)
        if top is not None and directory == top:
            break
    return Found(top, f"no handoff tree yet; using the repository at {top}") if top else Found(cwd, in_git=False)

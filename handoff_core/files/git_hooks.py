"""The git pre-commit hook ``handoff-mcp guard --install-git-hook`` installs, and the task a linked
worktree works for.

The hook lives where git looks for hooks: asked of git with the user's whole configuration (system,
global and repository ``core.hooksPath``; see ``git_process.run``'s ``user_config``), since that is what
the user's git will read when it commits. A relative ``core.hooksPath`` names a folder in each work
tree; installed from a linked worktree it would be an untracked file in that task's worktree,
which its own audit then blames, so that is refused. An existing pre-commit hook that is not
exactly ours (a marker line alone does not make it ours) is kept under another name and run after
ours, so installing twice, or over another tool's hook, loses nothing, and uninstalling puts it
back. Which task a linked worktree works for is derived from the TASKs, which pin their worktree
(``guard.check_commit``); ``--install-git-hook --ref`` may also record it in that worktree's own
git directory (``handoff-task``: the ref, and the TASK's SHA-256 at install, so a TASK changed
since refuses every commit).
"""

from __future__ import annotations

import os
import shlex
import stat
from pathlib import Path

from handoff_core.errors import GitError
from handoff_core.files import git_process

__all__ = ["CHAINED", "MARK", "TASK_FILE_NAME", "hook_path", "install", "record_task", "recorded_task", "uninstall"]

MARK = "# handoff-mcp guard pre-commit hook"
CHAINED = "pre-commit.handoff-chained"
TASK_FILE_NAME = "handoff-task"


def _asked(repo: Path, *args: str) -> str:
    _, out = git_process.run(repo, *args, ok=(0, 1), user_config=True)
    return out.decode("utf-8", "surrogateescape").strip()


def hook_path(repo: Path) -> Path:
    """Where git runs this repository's pre-commit hook from (``core.hooksPath`` honoured at every
    configuration level); refused when that is a relative folder inside a linked worktree."""
    configured = _asked(repo, "config", "--get", "core.hooksPath")
    if configured and not configured.startswith(("/", "~")):
        dirs = _asked(repo, "rev-parse", "--path-format=absolute", "--absolute-git-dir", "--git-common-dir")
        if len(set(dirs.splitlines())) > 1:  # a linked worktree: its git directory is not the common one
            raise GitError(
                f"core.hooksPath is the relative {configured}: git runs hooks from each worktree's own "
                f"{configured}/, and a hook installed in {repo} would be an untracked file in that task's "
                "worktree; set an absolute core.hooksPath, or install in the main worktree and commit the hook there"
            )
    hooks = Path(_asked(repo, "rev-parse", "--git-path", "hooks"))
    return (hooks if hooks.is_absolute() else repo / hooks) / "pre-commit"


_TAIL = [f'chained="$(dirname "$0")/{CHAINED}"', 'if [ -x "$chained" ]; then exec "$chained" "$@"; fi', "exit 0", ""]


def _script(command: list[str]) -> str:
    return "\n".join(["#!/bin/sh", MARK, f"{shlex.join(command)} || exit 1", *_TAIL])


def _is_ours(path: Path) -> bool:
    """Whether ``path`` is a hook this module wrote: its exact form, not merely the marker line."""
    try:
        lines = path.read_text(errors="replace").split("\n")
    except FileNotFoundError:
        return False
    return len(lines) == 3 + len(_TAIL) and lines[:2] == ["#!/bin/sh", MARK] and lines[3:] == _TAIL


def _write(path: Path, text: str) -> None:
    temp = path.with_name(f".{path.name}.handoff.tmp")
    temp.write_text(text)
    temp.chmod(0o755)
    os.replace(temp, path)  # noqa: TID251 - a hook is no handoff file: rewritten whole, git never runs half


def install(repo: Path, command: list[str]) -> Path:
    """Install (or refresh) the hook running ``command``; another tool's hook is chained, never lost."""
    path = hook_path(repo)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() and not _is_ours(path):
        if (path.parent / CHAINED).exists():
            raise GitError(f"both {path} and {path.parent / CHAINED} exist: merge them by hand, then install again")
        os.rename(path, path.parent / CHAINED)
    _write(path, _script(command))
    return path


def uninstall(repo: Path) -> bool:
    """Remove this hook and put a chained one back; False when none of ours was installed."""
    path = hook_path(repo)
    if not _is_ours(path):
        return False
    chained = path.parent / CHAINED
    if chained.exists():
        os.replace(chained, path)  # noqa: TID251 - the chained hook goes back where it was
    else:
        path.unlink()
    return True


def _git_dir(tree: Path, keep: dict[str, str] | None = None) -> Path:
    _, out = git_process.run(tree, "rev-parse", "--absolute-git-dir", keep=keep)
    return Path(out.decode("utf-8", "surrogateescape").strip())


def record_task(tree: Path, ref: str, task_sha256: str) -> Path:
    """Record in ``tree``'s own git directory which task it works for, and its TASK's SHA-256 then."""
    path = _git_dir(tree) / TASK_FILE_NAME
    _write(path, f"{ref}\n{task_sha256}\n")
    path.chmod(stat.S_IRUSR | stat.S_IWUSR | stat.S_IRGRP | stat.S_IROTH)
    return path


def recorded_task(tree: Path, keep: dict[str, str] | None = None) -> tuple[str, str | None] | None:
    """The task ``tree`` works for and the TASK's SHA-256 recorded with it (None: a record from before
    pins), or None when no record names one."""
    try:
        with open(_git_dir(tree, keep) / TASK_FILE_NAME, "rb") as record:
            lines = record.read(512).decode("utf-8", "replace").split("\n")
    except FileNotFoundError:
        return None
    ref, pin = lines[0].strip(), (lines[1].strip() if len(lines) > 1 else "")
    return (ref, pin or None) if ref else None

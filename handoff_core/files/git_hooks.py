"""The git pre-commit hook ``handoff-mcp guard --install-git-hook`` installs, and the task a linked
worktree works for.

The hook lives where git looks for hooks (``core.hooksPath`` honoured); an existing pre-commit hook
is kept under another name and run after ours, so installing twice, or over another tool's hook,
loses nothing, and uninstalling puts it back. Which task a worktree works for is recorded in that
worktree's own git directory (``handoff-task``), so the hook reads one small file and one TASK:
no walk of the handoff tree.
"""

from __future__ import annotations

import os
import shlex
import stat
from pathlib import Path

from handoff_core.errors import GitError
from handoff_core.files import git

__all__ = ["CHAINED", "MARK", "TASK_FILE_NAME", "hook_path", "install", "record_task", "recorded_task", "uninstall"]

MARK = "# handoff-mcp guard pre-commit hook"
CHAINED = "pre-commit.handoff-chained"
TASK_FILE_NAME = "handoff-task"


def hook_path(repo: Path) -> Path:
    """Where git runs this repository's pre-commit hook from (``core.hooksPath`` honoured)."""
    _, out = git.run(repo, "rev-parse", "--git-path", "hooks", own_hooks=True)
    hooks = Path(out.decode("utf-8", "surrogateescape").strip())
    return (hooks if hooks.is_absolute() else repo / hooks) / "pre-commit"


def _script(command: list[str]) -> str:
    return "\n".join(
        [
            "#!/bin/sh",
            MARK,
            f"{shlex.join(command)} || exit 1",
            f'chained="$(dirname "$0")/{CHAINED}"',
            'if [ -x "$chained" ]; then exec "$chained" "$@"; fi',
            "exit 0",
            "",
        ]
    )


def _write(path: Path, text: str) -> None:
    temp = path.with_name(f".{path.name}.handoff.tmp")
    temp.write_text(text)
    temp.chmod(0o755)
    os.replace(temp, path)  # noqa: TID251 - a hook is no handoff file: rewritten whole, git never runs half


def install(repo: Path, command: list[str]) -> Path:
    """Install (or refresh) the hook running ``command``; another tool's hook is chained, never lost."""
    path = hook_path(repo)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() and MARK not in path.read_text(errors="replace"):
        if (path.parent / CHAINED).exists():
            raise GitError(f"both {path} and {path.parent / CHAINED} exist: merge them by hand, then install again")
        os.rename(path, path.parent / CHAINED)
    _write(path, _script(command))
    return path


def uninstall(repo: Path) -> bool:
    """Remove this hook and put a chained one back; False when none of ours was installed."""
    path = hook_path(repo)
    if not path.exists() or MARK not in path.read_text(errors="replace"):
        return False
    chained = path.parent / CHAINED
    if chained.exists():
        os.replace(chained, path)  # noqa: TID251 - the chained hook goes back where it was
    else:
        path.unlink()
    return True


def _git_dir(tree: Path, keep: dict[str, str] | None = None) -> Path:
    _, out = git.run(tree, "rev-parse", "--absolute-git-dir", keep=keep)
    return Path(out.decode("utf-8", "surrogateescape").strip())


def record_task(tree: Path, ref: str) -> Path:
    """Record in ``tree``'s own git directory which task it works for."""
    path = _git_dir(tree) / TASK_FILE_NAME
    _write(path, f"{ref}\n")
    path.chmod(stat.S_IRUSR | stat.S_IWUSR | stat.S_IRGRP | stat.S_IROTH)
    return path


def recorded_task(tree: Path, keep: dict[str, str] | None = None) -> str | None:
    """The task ``tree`` works for, or None when no task names it."""
    try:
        with open(_git_dir(tree, keep) / TASK_FILE_NAME, "rb") as record:
            return record.read(512).decode("utf-8", "replace").strip() or None
    except FileNotFoundError:
        return None

"""The one rule every evidence layer judges a written path by: the guard before a write, the git
pre-commit hook before a commit, the audit after the work.

Allowed: an implementation task's writable globs and the shared paths it owns; a read-only task's
artifacts. Never: anything in the handoff tree (TASK.md, REPORT.md of any task: a REPORT goes
through ``write_report``). Paths are judged relative to the task's root (its worktree, or the
project root for ``current`` and read-only tasks), after ``..`` and symlinks are resolved by the
caller: a worktree task writes only inside its own worktree, never in the main tree or another
worktree. A path outside the project is not the project's, and allowed.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from handoff_core.contract.globs import glob_regex
from handoff_core.contract.task import Task

__all__ = ["ScopeRule", "owns_shared"]

_OWNERS = ("executor", "task")  # a shared path with one of these owners is the task's own to write


def owns_shared(task: Task, owner: str) -> bool:
    return owner in _OWNERS or owner in (task.task, f"{task.session}/{task.task}")


def _inside(path: str, root: str) -> str | None:
    """``path`` relative to ``root`` (both absolute, normalised), or None when it lies outside; strings,
    not ``pathlib``: an audit judges every changed path, and this is its inner loop."""
    if path == root:
        return "."
    prefix = root if root.endswith("/") else f"{root}/"
    return path[len(prefix) :] if path.startswith(prefix) else None


@dataclass(frozen=True)
class ScopeRule:
    """What one task may write, from its TASK alone (one read; no tree walk)."""

    task: Task
    ref: str
    project_root: Path  # resolved
    state_root: Path  # resolved

    @cached_property
    def root(self) -> Path:
        return Path(os.path.realpath(self.task.scope.worktree)) if self.task.scope.worktree else self.project_root

    @cached_property
    def allowed(self) -> tuple[str, ...]:
        scope = self.task.scope
        if self.task.kind != "implementation":
            return scope.artifacts
        return scope.writable + tuple(s.path for s in scope.shared if owns_shared(self.task, s.owner))

    @cached_property
    def _pattern(self) -> re.Pattern[str] | None:
        return re.compile("|".join(f"(?:{glob_regex(g)})" for g in self.allowed)) if self.allowed else None

    @cached_property
    def _handoff(self) -> str | None:
        """The handoff tree's place inside any work tree of the project (a worktree holds its own copy)."""
        return _inside(str(self.state_root), str(self.project_root))

    @cached_property
    def _roots(self) -> tuple[str, str, str]:
        return str(self.state_root), str(self.root), str(self.project_root)

    def described(self) -> str:
        what = "writable" if self.task.kind == "implementation" else "artifacts"
        return f"{what}: {', '.join(self.allowed) or 'none'}"

    def judge_relative(self, relative: str) -> str | None:
        """Why ``relative`` (to the task's root, posix, no ``..``) may not be written; None when it may."""
        if self._handoff is not None and (relative == self._handoff or relative.startswith(f"{self._handoff}/")):
            return "inside the handoff tree: TASK.md and REPORT.md are written only through the tools"
        owner = next((s.owner for s in self.task.scope.shared if re.fullmatch(glob_regex(s.path), relative)), None)
        if self._pattern is not None and self._pattern.fullmatch(relative):
            return None
        if owner is not None:
            return f"a shared path owned by {owner}"
        return "outside the task's scope"

    def judge(self, path: Path | str) -> str | None:
        """Why the absolute, already resolved ``path`` may not be written; None when it may."""
        state, root, project = self._roots
        if _inside(str(path), state) is not None:
            return "inside the handoff tree: TASK.md and REPORT.md are written only through the tools"
        relative = _inside(str(path), root)
        if relative is not None:
            return self.judge_relative(relative) if relative != "." else "the task's root itself"
        if _inside(str(path), project) is not None:
            return f"in the main tree, outside the task's worktree {self.root}"
        if self._other_worktree(path):
            return f"in another worktree of the project, outside the task's worktree {self.root}"
        return None

    def _other_worktree(self, path: Path | str) -> bool:
        """Whether ``path`` lies in a linked worktree of this repository: its ``.git`` file points into
        the main tree's ``.git/worktrees`` (a few stats up the path, no walk of any tree)."""
        common = str(self.project_root / ".git" / "worktrees") + "/"
        path = Path(path)
        for parent in (path, *path.parents):
            marker = parent / ".git"
            if marker.is_file():
                try:
                    head = marker.read_bytes()[:4096].decode("utf-8", "replace")
                except OSError:
                    return False
                target = head.removeprefix("gitdir:").strip()
                return os.path.realpath(target).startswith(common)
            if marker.exists():
                return False
        return False

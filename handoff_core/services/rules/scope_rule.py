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
from operator import methodcaller

# The hook process loads this rule on every event: no typing, pathlib or dataclasses at run time.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from re import Pattern
    from typing import Protocol

    class SharedLike(Protocol):
        @property
        def path(self) -> str: ...
        @property
        def owner(self) -> str: ...

    class ScopeLike(Protocol):
        @property
        def worktree(self) -> str: ...
        @property
        def writable(self) -> tuple[str, ...]: ...
        @property
        def artifacts(self) -> tuple[str, ...]: ...
        @property
        def shared(self) -> tuple[SharedLike, ...]: ...
        @property
        def dirty(self) -> tuple[str, ...]: ...
        @property
        def actions(self) -> tuple[str, ...]: ...
        @property
        def branch(self) -> str: ...
        @property
        def base(self) -> str: ...
        @property
        def remote(self) -> str: ...
        @property
        def resources(self) -> tuple[str, ...]: ...
        @property
        def sandbox(self) -> str: ...

    class TaskLike(Protocol):
        """What the rule reads of a TASK: ``contract.task.Task``, or the hook's lean reading of it."""

        @property
        def kind(self) -> str: ...
        @property
        def task(self) -> str: ...
        @property
        def session(self) -> str: ...
        @property
        def scope(self) -> ScopeLike: ...


__all__ = ["ScopeRule", "owns_shared"]

_OWNERS = ("executor", "task")  # a shared path with one of these owners is the task's own to write


def owns_shared(task: TaskLike, owner: str) -> bool:
    return owner in _OWNERS or owner in (task.task, f"{task.session}/{task.task}")


def _inside(path: str, root: str) -> str | None:
    """``path`` relative to ``root`` (both absolute, normalised), or None when it lies outside; strings,
    not ``pathlib``: an audit judges every changed path, and this is its inner loop."""
    if path == root:
        return "."
    prefix = root if root.endswith("/") else f"{root}/"
    return path[len(prefix) :] if path.startswith(prefix) else None


class ScopeRule:
    """What one task may write, from its TASK alone (one read; no tree walk)."""

    def __init__(self, task: TaskLike, ref: str, project_root: Path | str, state_root: Path | str) -> None:
        self.task, self.ref = task, ref
        self.project = str(project_root)  # resolved
        self.state = str(state_root)  # resolved
        self.root_text = os.path.realpath(task.scope.worktree) if task.scope.worktree else self.project
        scope = task.scope
        if task.kind != "implementation":
            self.allowed: tuple[str, ...] = scope.artifacts
        else:
            self.allowed = scope.writable + tuple(s.path for s in scope.shared if owns_shared(task, s.owner))
        self._compiled: tuple[Pattern[str] | None] | None = None  # compiled on first judgement: a sandbox never judges
        # The handoff tree's place inside any work tree of the project (a worktree holds its own copy).
        self._handoff = _inside(self.state, self.project)
        self._linked: tuple[str, ...] | None = None

    @property
    def _pattern(self) -> Pattern[str] | None:
        if self._compiled is None:
            import re

            from handoff_core.contract.globs import glob_regex

            joined = "|".join(f"(?:{glob_regex(g)})" for g in self.allowed)
            self._compiled = (re.compile(joined) if self.allowed else None,)
        return self._compiled[0]

    @property
    def root(self) -> Path:
        from pathlib import Path  # here: the hook process judges by strings

        return Path(self.root_text)

    @property
    def project_root(self) -> Path:
        from pathlib import Path

        return Path(self.project)

    def described(self) -> str:
        what = "writable" if self.task.kind == "implementation" else "artifacts"
        return f"{what}: {', '.join(self.allowed) or 'none'}"

    def judge_relative(self, relative: str) -> str | None:
        """Why ``relative`` (to the task's root, posix, no ``..``) may not be written; None when it may."""
        if self._handoff is not None and (relative == self._handoff or relative.startswith(f"{self._handoff}/")):
            return "inside the handoff tree: TASK.md and REPORT.md are written only through the tools"
        import re

        from handoff_core.contract.globs import glob_regex

        owner = next((s.owner for s in self.task.scope.shared if re.fullmatch(glob_regex(s.path), relative)), None)
        if self._pattern is not None and self._pattern.fullmatch(relative):
            return None
        if owner is not None:
            return f"a shared path owned by {owner}"
        return "outside the task's scope"

    def plainly_allowed(self, top: str) -> Callable[[str], bool] | None:
        """For paths relative to ``top``, a test that is True only where ``judge(f"{top}/{relative}")`` is
        None because the TASK's globs allow the path (outside any handoff tree); None when ``top`` is not
        the task's root, or a handoff tree lies about it otherwise. An audit judges every changed path:
        this is its inner loop, one regex match a path."""
        pattern, root, handoff = self._pattern, self.root_text, self._handoff
        state = _inside(self.state, root)
        if top != root or root.endswith("/") or pattern is None or _inside(root, self.state) is not None:
            return None
        if state is not None and state != handoff:
            return None
        match, inner = pattern.fullmatch, f"{handoff}/"
        if handoff is None:
            return lambda relative: relative not in ("", ".") and match(relative) is not None
        return lambda relative: (
            relative not in ("", ".", handoff) and not relative.startswith(inner) and match(relative) is not None
        )

    def all_plainly_allowed(self, top: str, relatives: list[str]) -> bool:
        """Whether ``plainly_allowed(top)`` is True for each of ``relatives``, with no Python call a path:
        the compiled pattern mapped over them, the handoff tree's tests as a set and a mapped prefix test
        (an audit's common case: every path allowed)."""
        if self.plainly_allowed(top) is None or self._pattern is None:
            return False
        handoff = self._handoff
        if not {"", ".", handoff}.isdisjoint(relatives) or not all(map(self._pattern.fullmatch, relatives)):
            return False
        return handoff is None or not any(map(methodcaller("startswith", f"{handoff}/"), relatives))

    def judge(self, path: Path | str) -> str | None:
        """Why the absolute, already resolved ``path`` may not be written; None when it may."""
        path = str(path)
        if _inside(path, self.state) is not None:
            return "inside the handoff tree: TASK.md and REPORT.md are written only through the tools"
        relative = _inside(path, self.root_text)
        if relative is not None:
            return self.judge_relative(relative) if relative != "." else "the task's root itself"
        if _inside(path, self.project) is not None:
            return f"in the main tree, outside the task's worktree {self.root_text}"
        if self._other_worktree(path):
            return f"in another worktree of the project, outside the task's worktree {self.root_text}"
        return None

    def linked_worktrees(self) -> tuple[str, ...]:
        """Every linked worktree git knows of this repository, from ``.git/worktrees/*/gitdir`` (read
        once: a few small files, whatever the worktrees' own ``.git`` files now say)."""
        if self._linked is None:
            found = []
            common = os.path.join(self.project, ".git", "worktrees")
            try:
                names = os.listdir(common)
            except OSError:
                names = []
            for name in names[:1000]:
                try:
                    with open(os.path.join(common, name, "gitdir"), "rb") as record:
                        marker = record.read(4096).decode("utf-8", "surrogateescape").strip()
                except OSError:
                    continue
                if marker:
                    found.append(os.path.realpath(os.path.dirname(os.path.join(common, name, marker))))
            self._linked = tuple(found)
        return self._linked

    def _other_worktree(self, path: str) -> bool:
        """Whether ``path`` lies in a linked worktree of this repository, whatever lies between: one git
        records, or a folder whose ``.git`` file points into ``.git/worktrees`` (a relative ``gitdir``
        read against that file's folder); a nested repository inside one belongs to it."""
        if any(_inside(path, tree) is not None for tree in self.linked_worktrees()):
            return True
        common = os.path.join(self.project, ".git", "worktrees") + "/"
        parent = path
        for _ in range(4096):  # every ancestor up to /: a nested repository never hides the tree it is in
            marker = os.path.join(parent, ".git")
            if os.path.isfile(marker):
                try:
                    with open(marker, "rb") as record:
                        head = record.read(4096).decode("utf-8", "surrogateescape")
                except OSError:
                    head = ""
                target = head.removeprefix("gitdir:").strip()
                if target and os.path.realpath(os.path.join(parent, target)).startswith(common):
                    return True
            if parent in ("/", ""):
                return False
            parent = os.path.dirname(parent)
        return False

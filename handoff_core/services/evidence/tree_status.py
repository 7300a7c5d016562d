"""A task tree's uncommitted and untracked paths, from one ``git status -z`` started without the
``subprocess`` module (the hook process runs after every shell command and pays for each import).

The same command, environment and parsing as ``files.git.dirty_paths`` (a test holds the two to the
same answer): no system or global configuration, no hooks, no optional locks, no transport and no
lazy fetch (``git_config.ENVIRONMENT``), bounded in time and output; a git that fails, is killed or
says too much is an error, never an empty answer.
"""

from __future__ import annotations

import os
import select
import time

from handoff_core.errors import GitError
from handoff_core.files.git_config import (
    CONFIG_LISTING,
    ENVIRONMENT,
    FIXED,
    common_dir_of,
    names_nothing,
    overrides,
    refuse_attributes,
    work_tree_top,
)
from handoff_core.files.submodules import submodule_listing

__all__ = ["TIMEOUT", "Running", "StatusFailed", "StatusRefused", "changed_paths", "head_by_git", "start_status"]

TIMEOUT = 10.0
MAX_OUTPUT = 16 * 1024 * 1024
# The evidence layer's fixed configuration (files.git_config): no hooks, fsmonitor, untracked cache or
# helpers, whatever the repository's config says.
_ARGS = (*(arg for key, value in FIXED for arg in ("-c", f"{key}={value}")), "--no-pager")
_STATUS = ("status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignore-submodules=none")


class StatusFailed(Exception):
    """git could not say what changed: the hook reports that instead of a clean tree."""


class StatusRefused(StatusFailed):
    """The tree is kept so that git could answer wrongly; the message says what to change."""


def _environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | ENVIRONMENT


def _work_tree(tree: str) -> dict[str, str]:
    """``GIT_WORK_TREE``: the nearest folder holding ``.git``, as the evidence layer names it, so that a
    ``core.worktree`` in the repository's config cannot point git at a copy that hides the tree's changes."""
    top = work_tree_top(tree)
    return {} if top is None else {"GIT_WORK_TREE": top}  # no repository: git says so


def _kill(pid: int) -> None:
    import signal  # here: only a git that overran pays for the module

    os.kill(pid, signal.SIGKILL)


def _read(fd: int, pid: int) -> bytes:
    chunks: list[bytes] = []
    size, deadline = 0, time.monotonic() + TIMEOUT
    while size <= MAX_OUTPUT:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            _kill(pid)
            raise StatusFailed(f"git status took over {TIMEOUT:.0f} s")
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        size += len(chunk)
    _kill(pid)
    raise StatusFailed(f"git status said more than {MAX_OUTPUT} bytes")


class Running:
    """A git started in a tree, its output on a pipe: ``output`` reads it (bounded in time and size) and
    reaps it; ``drop`` kills and reaps one that will not be read. Either, once: no git is left behind."""

    def __init__(self, pid: int, fd: int, what: str, tree: str, ok: tuple[int, ...]) -> None:
        self.pid, self.fd, self.what, self.tree, self.ok = pid, fd, what, tree, ok
        self.status = 0  # its wait status, once reaped

    def output(self) -> bytes:
        try:
            out = _read(self.fd, self.pid)
        finally:
            self._reap()
        if os.waitstatus_to_exitcode(self.status) not in self.ok:
            raise StatusFailed(f"git {self.what} failed in {self.tree}")
        return out

    def paths(self) -> list[tuple[str, str]]:
        """``(status, path)`` for every changed path the status says, both sides of a rename."""
        return _parsed(self.output())

    def drop(self) -> None:
        if self.fd >= 0:
            _kill(self.pid)
            self._reap()

    def _reap(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
            _, self.status = os.waitpid(self.pid, 0)


def _run(
    tree: str, args: tuple[str, ...] = _STATUS, env: dict[str, str] | None = None, ok: tuple[int, ...] = (0,)
) -> bytes:
    return _start(tree, args, env, ok).output()


def _start(
    tree: str, args: tuple[str, ...] = _STATUS, env: dict[str, str] | None = None, ok: tuple[int, ...] = (0,)
) -> Running:
    read_end, write_end = os.pipe()
    null = os.open(os.devnull, os.O_RDWR)
    try:
        actions = [
            (os.POSIX_SPAWN_DUP2, null, 0),
            (os.POSIX_SPAWN_DUP2, write_end, 1),
            (os.POSIX_SPAWN_DUP2, null, 2),
            (os.POSIX_SPAWN_CLOSE, read_end),
        ]
        argv = ["git", "-C", tree, *_ARGS, *args]
        pid = os.posix_spawnp("git", argv, env or _environment(), file_actions=actions)
    except OSError as exc:
        os.close(read_end)
        raise StatusFailed(f"cannot run git ({exc.strerror})") from exc
    finally:
        os.close(write_end)
        os.close(null)
    return Running(pid, read_end, args[0], tree, ok)


def head_by_git(top: str) -> tuple[str | None, str | None]:
    """``(branch ref, commit)`` of the work tree ``top``'s ``HEAD`` as git reads it (for a repository whose
    files ``git_records`` cannot read plainly); None for a detached ``HEAD``'s ref or an unborn one's commit."""
    env = _environment() | {"GIT_WORK_TREE": top}
    ref = _run(top, ("symbolic-ref", "-q", "HEAD"), env, ok=(0, 1)).decode("utf-8", "surrogateescape").strip()
    oid = _run(top, ("rev-parse", "--verify", "-q", "HEAD"), env, ok=(0, 1, 128)).decode().strip()
    return ref or None, oid or None


def _ask(cwd: str, args: tuple[str, ...], ok: tuple[int, ...]) -> bytes:
    return _run(cwd, args, _environment() | {"GIT_WORK_TREE": cwd}, ok)


def changed_paths(tree: str) -> list[tuple[str, str]]:
    """``(status, path)`` for every changed path of ``tree``, both sides of a rename (``?``: untracked)."""
    return start_status(tree).paths()


def start_status(tree: str) -> Running:
    """``changed_paths`` of ``tree`` started: its ``git status`` runs while the caller starts others."""
    # Filter drivers the repository's config names are overruled first, as the evidence layer does
    # (one `git config --get-regexp`, which runs nothing it reads), unless its files name none; so are
    # those of every populated submodule's config, which the child git status starts there reads.
    work_tree = _work_tree(tree)
    top = work_tree.get("GIT_WORK_TREE", tree)
    common = common_dir_of(top) or _run(top, ("rev-parse", "--path-format=absolute", "--git-common-dir"))
    try:  # the audit's refusals, as the audit words them
        refuse_attributes(common.rstrip(b"\n"))
        listing = b"" if names_nothing(top) else _run(top, CONFIG_LISTING, ok=(0, 1))
        inner = submodule_listing(top, _ask)
    except GitError as exc:
        raise StatusRefused(exc.message) from exc
    if inner is None:
        raise StatusFailed(f"{top} has too many submodules (or levels of them) to check their filters")
    planted = overrides(listing + b"\0" + inner)
    return _start(tree, _STATUS, _environment() | planted | work_tree)


def _parsed(output: bytes) -> list[tuple[str, str]]:
    fields = output.split(b"\0")
    found: list[tuple[str, str]] = []
    index = 0
    while index < len(fields):
        field = fields[index].decode("utf-8", "surrogateescape")
        index += 1
        if len(field) <= len("XY "):
            continue
        code, path = field[:2], field[3:]
        status = "?" if code == "??" else code.strip()[:1]
        found.append((status, path))
        if ("R" in code or "C" in code) and index < len(fields):
            found.append(("D" if "R" in code else status, fields[index].decode("utf-8", "surrogateescape")))
            index += 1
    return found

"""A task's TASK as a hook reads it: one read by directory handle, its SHA-256 checked against the
one the hook was printed with, and its scope.

Pinned (the hook given ``--task-sha256``), a TASK whose bytes differ from the published ones is no
scope at all: the caller denies everything. Pinned bytes are the server's own rendering, so the
lines the renderer writes (``key: "text"``, ``key: ["a", …]``, printable ASCII) are read without
the contract's parser; anything else, an archived change, or an unpinned TASK goes through the
contract's full ``parse_task``. Stdlib only on the common path: the hook process imports this.
"""

from __future__ import annotations

import os
import stat  # loaded by os already

from handoff_core.contract.digest import sha256_hex
from handoff_core.services.evidence.lean_lines import read_lines, simple_hex, simple_name

TYPE_CHECKING = False  # typing is not loaded at run time
if TYPE_CHECKING:
    from handoff_core.services.rules.scope_rule import ScopeLike, TaskLike

__all__ = [
    "LeanScope",
    "LeanShared",
    "LeanTask",
    "PinnedTask",
    "TaskUnreadable",
    "actions_in_effect",
    "read_pinned",
]

MAX_TASK_BYTES = 4 * 1024 * 1024  # layout.MAX_FILE_BYTES (a test pins the two equal)
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FENCE = "\n```handoff-scope\n"


class TaskUnreadable(Exception):
    """The TASK cannot be read or is not the one pinned: the hook denies, with this reason."""


class LeanShared:
    __slots__ = ("owner", "path")

    def __init__(self, path: str, owner: str) -> None:
        self.path, self.owner = path, owner


class LeanScope:
    __slots__ = (
        *("actions", "artifacts", "base", "branch", "dirty", "remote", "resources", "sandbox", "shared"),
        *("workspace", "worktree", "writable"),
    )

    def __init__(self, fields: dict[str, object]) -> None:
        self.workspace = _text(fields, "workspace")
        self.worktree = _text(fields, "worktree")
        self.branch = _text(fields, "branch")
        self.base = _text(fields, "base")
        self.remote = _text(fields, "remote")
        self.resources = _texts(fields, "resources")
        self.sandbox = _text(fields, "sandbox") or "required"
        self.writable = _texts(fields, "writable")
        self.artifacts = _texts(fields, "artifacts")
        self.dirty = _texts(fields, "dirty_at_dispatch")
        self.actions = _texts(fields, "authorised_actions")
        shared = fields.get("shared") or []
        if not isinstance(shared, list) or not all(isinstance(item, dict) for item in shared):
            raise ValueError("shared")
        self.shared = tuple(LeanShared(_text(item, "path"), _text(item, "owner")) for item in shared)


class LeanTask:
    __slots__ = ("kind", "scope", "session", "task")

    def __init__(self, kind: str, session: str, task: str, scope: LeanScope) -> None:
        self.kind, self.session, self.task, self.scope = kind, session, task, scope


def _text(fields: dict[str, object], key: str) -> str:
    value = fields.get(key) or ""
    if not isinstance(value, str):
        raise ValueError(key)
    return value


def _texts(fields: dict[str, object], key: str) -> tuple[str, ...]:
    value = fields.get(key) or []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(key)
    return tuple(value)


def _lean(text: str) -> LeanTask | None:
    """The scope of a TASK as rendered, without the contract's parser; None: read it the full way."""
    if not text.startswith("---\n") or text.count(_FENCE) != 1:
        return None
    end = text.find("\n---\n", 3)
    start = text.index(_FENCE) + len(_FENCE)
    close = text.find("\n```", start - 1)
    if end < 0 or close < 0:
        return None
    meta, block = read_lines(text[4:end]), read_lines(text[start:close])
    if meta is None or block is None or not block:
        return None
    try:
        return LeanTask(_text(meta, "kind"), _text(meta, "session"), _text(meta, "task"), LeanScope(block))
    except (ValueError, TypeError):
        return None


def _full(text: str) -> TaskLike:
    from handoff_core.contract.task_file import parse_task  # here: only an unpinned or unusual TASK pays for it
    from handoff_core.errors import HandoffError

    try:
        return parse_task(text)
    except HandoffError as exc:
        raise TaskUnreadable(f"the TASK does not parse ({exc.message})") from exc


def _walk(state_root: str, parts: tuple[str, ...]) -> int:
    fd = os.open(state_root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts:
            nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd


def _read_task(dir_fd: int) -> bytes:
    fd = os.open("TASK.md", os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise TaskUnreadable("TASK.md is not a regular file")
        chunks, size = [], 0
        while size <= MAX_TASK_BYTES and (chunk := os.read(fd, 1 << 20)):
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    if size > MAX_TASK_BYTES:
        raise TaskUnreadable("TASK.md is over the size limit")
    return b"".join(chunks)


class PinnedTask:
    """One read of a task's TASK: its bytes' SHA-256, whether it matched the pin, its scope, whether
    its REPORT exists, and the actions it authorises."""

    __slots__ = ("authorised", "has_release", "has_report", "pinned", "sha256", "task", "text")

    def __init__(self, data: bytes, pin: str | None, has_report: bool, has_release: bool = False) -> None:
        self.sha256 = sha256_hex(data)
        self.pinned = pin is not None
        if pin is not None and pin != self.sha256:
            raise TaskUnreadable(
                f"the TASK's bytes are not the ones published (sha256 {self.sha256[:16]}…, "
                f"the hook was given {pin[:16]}…): the TASK changed after dispatch, so nothing is allowed"
            )
        self.text = data.decode("utf-8", "replace").removeprefix("\ufeff")
        lean = _lean(self.text) if pin is not None else None  # unpinned: no shortcut for a hand edit
        self.task: TaskLike = lean if lean is not None else _full(self.text)
        self.has_report = has_report
        self.has_release = has_release
        self.authorised = frozenset(self.task.scope.actions)

    @property
    def in_effect(self) -> frozenset[str]:
        """The actions the TASK authorises (``actions_in_effect``)."""
        return actions_in_effect(self.task.scope)


def actions_in_effect(scope: ScopeLike) -> frozenset[str]:
    """The actions a TASK of ``scope`` authorises: those it lists; a TASK that lists none authorises a
    commit in a worktree of its own (the dispatch asks for a committed checkpoint there), a commit and
    its push for a branch on the git remote (the TASK says to push it there), and nothing else. The
    guard, the sandbox and the audit all read it here."""
    if scope.actions:
        return frozenset(scope.actions)
    if scope.worktree:
        return frozenset({"commit"})
    return frozenset({"commit", "push"}) if scope.branch and scope.remote else frozenset()


def read_pinned(state_root: str, ref: str, pin: str | None) -> PinnedTask:
    """The task ``ref``'s TASK, read by handle from ``state_root`` and checked against ``pin``."""
    if pin is not None and not simple_hex(pin):
        raise TaskUnreadable("--task-sha256 is not 64 lowercase hex digits")
    parts = ref.split("/")
    if len(parts) != len(("change", "session", "task")) or not all(simple_name(part) for part in parts):
        raise TaskUnreadable(f"{ref[:200]!r} is not a task ref (change/session/task)")
    change, session, task = parts
    try:
        fd = _walk(state_root, ("specdev", "changes", change, "sessions", session, task))
    except FileNotFoundError:
        return _archived(state_root, ref, pin)
    except OSError as exc:
        raise TaskUnreadable(f"cannot open the task's folder ({exc.strerror})") from exc
    try:
        data = _read_task(fd)
        has_report, has_release = _exists(fd, "REPORT.md"), _exists(fd, "RELEASE.md")
    except OSError as exc:
        raise TaskUnreadable(f"cannot read the TASK ({exc.strerror})") from exc
    finally:
        os.close(fd)
    return PinnedTask(data, pin, has_report, has_release)


def _exists(dir_fd: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def _archived(state_root: str, ref: str, pin: str | None) -> PinnedTask:
    """A task not among the active changes: found the contract's way (archived changes included)."""
    from pathlib import Path

    from handoff_core.contract.ids import parse_ref
    from handoff_core.errors import HandoffError
    from handoff_core.files.task_dir import open_task_dir

    try:
        with open_task_dir(Path(state_root), parse_ref(ref), active_only=False) as task_dir:
            data = task_dir.read("TASK.md")
            has_report = task_dir.has("REPORT.md")
    except HandoffError as exc:
        raise TaskUnreadable(exc.message) from exc
    except OSError as exc:
        raise TaskUnreadable(f"cannot read the TASK ({exc.strerror})") from exc
    return PinnedTask(data, pin, has_report)

"""Writer claims of a whole state root, re-read only where something can have changed.

Every implementation dispatch needs the claims of every active change (a read-only one never reads
them), so a long-lived server remembers what it judged, keyed on what it read (device, inode,
size, mtime_ns of the file): a task whose claim ended is remembered with the stamp of the REPORT
or RELEASE that ended it, and an open claim with the stamp of its TASK. Each scan stats that one
file again; a file removed, replaced or rewritten no longer matches and the task is judged afresh,
so a stray file deleted by hand never leaves the server admitting a second writer. Scans run under
the state-root lock that every TASK creation holds, so no TASK can appear half-seen.

That stat per task is why a fresh process's implementation dispatch grows with the tasks of active
changes. A long-lived server does without it: ``claim_rows`` keeps a row per round (its stamp and
the tasks in it that claim nothing) and judges, by this module's ``judge``, only the tasks of a
round that changed and the live ones.

A task whose TASK.md cannot be read (broken frontmatter, a scope block that is missing, doubled
or malformed, a file over the size limit, a symlink) claims the whole workspace: ``current`` and
``**``. That is the safe answer: it blocks every other writer until the Lead fixes the file or
releases the task with evidence, and it never stops the scan of the others. So does a task whose
TASK is not the one the Lead published, for an index given the Lead's anchor (``contract.anchor``):
a claim rests on the TASK as published, and an executor that narrows its globs, drops a resource or
rewrites its TASK into the original contract frees nothing. Without the anchor (a reader holding no
secret) the TASK is judged as it is now. A change that cannot be
read as a whole (it has two homes, its directory is a symlink, its README is over the size limit or
not a regular file) is held the same way, as one claim for all its tasks, until it is fixed: what
cannot be seen can still be writing.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

from handoff_core.contract.anchor import CHANGED_HOLD, TaskAnchor
from handoff_core.contract.ids import Ref, task_number
from handoff_core.contract.snapshot import Entry, Stamp
from handoff_core.contract.task_file import original_contract
from handoff_core.contract.validate import closes_claim
from handoff_core.errors import ChangeNotFound, HandoffError
from handoff_core.files.change_dir import locate_change
from handoff_core.files.entries import read_entry, shown_name, stamp_of
from handoff_core.files.paths import is_symlink, open_dir
from handoff_core.layout import CLOSING_FILES, SESSIONS, TASK_FILE
from handoff_core.services.rules.ownership import Claim
from handoff_core.services.tree.status import task_kind_and_scope

__all__ = [
    "WHOLE_CHANGE",
    "WHOLE_WORKSPACE",
    "ClaimIndex",
    "change_hold",
    "changed_hold",
    "unreadable_because",
    "unreadable_change",
]

WHOLE_WORKSPACE = ("**",)
WHOLE_CHANGE = "*"  # the round and task of a hold that stands for every task of a change


class _Seen(NamedTuple):  # a tuple: a server holds one per task
    file: str  # the file this judgement rests on
    stamp: Stamp
    claim: Claim | None  # None: the task never claims (read-only) or its claim has ended
    since: float = 0.0  # TASK.md mtime: a claim's age counts from it


def _restamp(round_fd: int, task: str, file: str) -> Stamp | None:
    try:
        return stamp_of(os.stat(f"{task}/{file}", dir_fd=round_fd, follow_symlinks=False))
    except OSError:
        return None


def judge(
    task_fd: int,
    ref: Ref,
    names: list[str],
    read: Callable[[int, str], Entry] = read_entry,
    anchor: TaskAnchor | None = None,
) -> _Seen | None:
    """What a task directory says now; None while it has no TASK.md yet (not remembered). Every
    file it rests on is read through ``read``. With the Lead's ``anchor``, an open claim rests on its
    TASK as published: one that does not verify holds the whole workspace, whatever it says now."""
    for name in CLOSING_FILES:
        if name in names and closes_claim(entry := read(task_fd, name), name, ref.session, ref.task):
            return _Seen(name, entry.stamp, None)
    if TASK_FILE not in names:
        return None
    entry = read(task_fd, TASK_FILE)
    if anchor is not None and anchor.state(str(ref), entry.data or b"") == "changed":
        return _Seen(TASK_FILE, entry.stamp, changed_hold(ref, entry.data), entry.mtime)
    kind, scope = task_kind_and_scope(entry.data)
    if kind is None and original_contract(entry.data):
        return _Seen(TASK_FILE, entry.stamp, None)  # the original contract's: not in a new dispatch's scan
    if kind is not None and kind != "implementation":
        if scope is None or not (scope.artifacts or scope.resources):
            return _Seen(TASK_FILE, entry.stamp, None)
        reader = Claim(
            ref=ref,
            workspace=None,
            writable=(),
            shared=(),
            age_seconds=0.0,
            resources=scope.resources,
            artifacts=scope.artifacts,
            worktree=scope.worktree,
        )
        return _Seen(TASK_FILE, entry.stamp, reader, entry.mtime)
    if kind is None or scope is None or scope.workspace is None:
        claim = Claim(
            ref=ref, workspace="current", writable=WHOLE_WORKSPACE, shared=(), age_seconds=0.0, unreadable=True
        )
    else:
        shared = tuple((s.path, s.owner) for s in scope.shared)
        claim = Claim(
            ref=ref,
            workspace=scope.workspace,
            writable=scope.writable,
            shared=shared,
            age_seconds=0.0,
            resources=scope.resources,
            worktree=scope.worktree,
            self_writer=scope.self_writer,
        )
    return _Seen(TASK_FILE, entry.stamp, claim, entry.mtime)


def changed_hold(ref: Ref, task: bytes | None) -> Claim:
    """The claim of a task whose TASK is not the one published: the whole workspace and every named
    resource (``ownership``), in the project tree and in the worktree it names now (a name can only
    add to what it holds)."""
    scope = task_kind_and_scope(task)[1]
    return Claim(
        ref=ref,
        workspace="current",
        writable=WHOLE_WORKSPACE,
        shared=(),
        age_seconds=0.0,
        unreadable=True,
        held_because=CHANGED_HOLD,
        worktree=scope.worktree if scope is not None else "",
    )


def unreadable_because(change: str, why: str) -> str:
    return f"change {change} cannot be read: {why}"


def unreadable_change(root: Path, change: str) -> str:
    """Why the tasks of ``change`` cannot be judged one by one; "" when they can (or it is gone)."""
    try:
        with locate_change(root, change) as (facts, _):
            return unreadable_because(change, facts.unreadable) if facts.unreadable else ""
    except ChangeNotFound:
        return ""  # nothing of it is left to be writing
    except HandoffError as exc:
        return unreadable_because(change, exc.message)
    except OSError as exc:
        return unreadable_because(change, exc.strerror or str(exc))


def change_hold(change: str, because: str) -> Claim:
    """The claim of a change that cannot be read: the whole workspace, for all its tasks."""
    return Claim(
        ref=Ref(change, WHOLE_CHANGE, WHOLE_CHANGE),
        workspace="current",
        writable=WHOLE_WORKSPACE,
        shared=(),
        age_seconds=0.0,
        unreadable=True,
        resources=(),
        held_because=because,
    )


class ClaimIndex:
    """Claims of outstanding tasks (TASK, no valid REPORT or RELEASE): every implementation task, and
    each read-only one that names artifacts or resources; no TTL."""

    def __init__(self) -> None:
        self._seen: dict[tuple[str, str, str], _Seen] = {}
        self._anchor: TaskAnchor | None = None  # what the judgements held rest on, with the files
        self._basis: tuple[bytes, bool] | None = None  # its key and whether the state root is governed

    def anchored(self, anchor: TaskAnchor | None) -> bool:
        """Judge by ``anchor`` from now on; True when that differs from what the judgements held rested
        on (another key, or a state root the Lead's secret governs now), which are then all dropped."""
        self._anchor = anchor
        basis = None if anchor is None else (anchor.key, anchor.governed)
        if basis == self._basis:
            return False
        self._basis = basis
        self._seen.clear()
        return True

    def claims(self, root: Path, changes: list[str], anchor: TaskAnchor | None = None) -> list[Claim]:
        self.anchored(anchor)
        now = time.time()
        found: list[Claim] = []
        for change in changes:
            try:
                found += self._change_claims(root, change, now)
            except ChangeNotFound:
                continue  # removed since it was listed: nothing of it is left to be writing
            except HandoffError as exc:
                found.append(change_hold(change, unreadable_because(change, exc.message)))
            except OSError as exc:
                found.append(change_hold(change, unreadable_because(change, exc.strerror or str(exc))))
        return found

    def _change_claims(self, root: Path, change: str, now: float) -> list[Claim]:
        found: list[Claim] = []
        with locate_change(root, change) as (facts, change_fd), ExitStack() as stack:
            if facts.location != "active":
                return found
            if facts.unreadable:
                return [change_hold(change, unreadable_because(change, facts.unreadable))]
            try:
                sessions_fd = open_dir(change_fd, SESSIONS)
            except FileNotFoundError:
                return found
            stack.callback(os.close, sessions_fd)
            return self._sessions_claims(sessions_fd, change, now)

    def _sessions_claims(self, sessions_fd: int, change: str, now: float) -> list[Claim]:
        found: list[Claim] = []
        for session in os.listdir(sessions_fd):
            try:
                round_fd = open_dir(sessions_fd, session)
            except (HandoffError, NotADirectoryError):
                if is_symlink(sessions_fd, session):
                    raise  # a round elsewhere may hold writers: the change holds the workspace
                continue  # a stray file is no round
            try:
                found += self._round_claims(round_fd, change, session, now)
            finally:
                os.close(round_fd)
        return found

    def _round_claims(self, round_fd: int, change: str, session: str, now: float) -> list[Claim]:
        found: list[Claim] = []
        for task in os.listdir(round_fd):
            key = (change, session, task)
            seen = self._seen.get(key)
            # A judgement with no claim stands while the file it rests on is the one that was read
            # (one stat: the loop every implementation dispatch runs over the whole active history).
            # An open claim may have just ended, so its directory is looked at.
            if seen is not None and seen.claim is None and _restamp(round_fd, task, seen.file) == seen.stamp:
                continue
            seen = self._read(round_fd, key, seen)
            if seen is not None and seen.claim is not None:
                found.append(replace(seen.claim, age_seconds=max(0.0, now - seen.since)))
        return found

    def _read(self, round_fd: int, key: tuple[str, str, str], seen: _Seen | None) -> _Seen | None:
        change, session, task = key
        try:
            task_fd = open_dir(round_fd, task)
        except (HandoffError, NotADirectoryError):
            self._seen.pop(key, None)
            if task_number(task) is not None and is_symlink(round_fd, task):
                # What it points at is not ours to read, but may be a writer's: judged again each scan.
                held = Claim(
                    ref=Ref(change, session, shown_name(task)),
                    workspace="current",
                    writable=WHOLE_WORKSPACE,
                    shared=(),
                    age_seconds=0.0,
                    unreadable=True,
                )
                return _Seen(TASK_FILE, (0, 0, 0, 0), replace(held, held_because="its task directory is a symlink"))
            return None  # a file: never a task of ours
        try:
            names = os.listdir(task_fd)
            unchanged = seen is not None and seen.file == TASK_FILE and not set(CLOSING_FILES) & set(names)
            if unchanged and seen is not None and _restamp(round_fd, task, TASK_FILE) == seen.stamp:
                return seen  # an open claim whose TASK is as read and that has nothing closing it
            judged = judge(task_fd, Ref(change, session, shown_name(task)), names, anchor=self._anchor)
        finally:
            os.close(task_fd)
        if judged is None:
            self._seen.pop(key, None)
        else:
            self._seen[key] = judged
        return judged

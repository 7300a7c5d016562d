"""Writer claims of a whole state root, re-read only where something can still change.

Every dispatch needs the claims of every active change, so a long-lived server remembers each
task it has seen. Most facts are final: a read-only task never claims, and a task with a REPORT
or RELEASE never claims again (both are write-once). Only the few open claims are re-checked
(one directory listing each), and unseen or incomplete task directories are read. Scans run under
the state-root lock that every TASK creation holds, so no TASK can appear half-seen.
"""

from __future__ import annotations

import os
import time
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path

from handoff_core.contract.ids import Ref
from handoff_core.errors import HandoffError
from handoff_core.files.paths import open_dir
from handoff_core.files.reader import locate_change, read_entry
from handoff_core.layout import CLOSING_FILES, SESSIONS, TASK_FILE
from handoff_core.services.ownership import Claim
from handoff_core.services.status import task_kind_and_scope

__all__ = ["ClaimIndex"]


@dataclass(frozen=True)
class _Seen:
    claim: Claim | None  # an open implementation claim (re-checked on every scan)
    since: float  # TASK.md mtime: a claim's age counts from it


_FINAL = _Seen(None, 0.0)  # never claims again


def _listing(round_fd: int, task: str) -> list[str] | None:
    try:
        fd = open_dir(round_fd, task)
    except (HandoffError, NotADirectoryError):
        return None  # a symlink or a file: never a task of ours
    try:
        return os.listdir(fd)
    finally:
        os.close(fd)


def _read(round_fd: int, ref: Ref, names: list[str]) -> _Seen | None:
    """What a task directory says now; None while it has no TASK.md yet (not remembered)."""
    if not set(CLOSING_FILES).isdisjoint(names):
        return _FINAL
    if TASK_FILE not in names:
        return None
    fd = open_dir(round_fd, ref.task)
    try:
        entry = read_entry(fd, TASK_FILE)
    finally:
        os.close(fd)
    kind, scope = task_kind_and_scope(entry.data)
    if kind != "implementation" or scope is None or scope.workspace is None:
        return _FINAL
    shared = tuple((s.path, s.owner) for s in scope.shared)
    return _Seen(Claim(ref, scope.workspace, scope.writable, shared, 0.0), entry.mtime)


class ClaimIndex:
    """Claims of outstanding implementation tasks (TASK, no REPORT, no RELEASE); no TTL."""

    def __init__(self) -> None:
        self._seen: dict[Ref, _Seen] = {}  # open claims
        self._final: set[tuple[str, str, str]] = set()  # tasks that can never claim again

    def claims(self, root: Path, changes: list[str]) -> list[Claim]:
        now = time.time()
        found: list[Claim] = []
        for change in changes:
            try:
                found += self._change_claims(root, change, now)
            except HandoffError:
                continue  # an unreadable change is reported by validation, not by dispatch
        return found

    def _change_claims(self, root: Path, change: str, now: float) -> list[Claim]:
        found: list[Claim] = []
        with locate_change(root, change) as (facts, change_fd), ExitStack() as stack:
            if facts.location != "active":
                return found
            try:
                sessions_fd = open_dir(change_fd, SESSIONS)
            except FileNotFoundError:
                return found
            stack.callback(os.close, sessions_fd)
            for session in os.listdir(sessions_fd):
                try:
                    round_fd = open_dir(sessions_fd, session)
                except (HandoffError, NotADirectoryError):
                    continue
                try:
                    found += self._round_claims(round_fd, change, session, now)
                finally:
                    os.close(round_fd)
        return found

    def _round_claims(self, round_fd: int, change: str, session: str, now: float) -> list[Claim]:
        found: list[Claim] = []
        for task in os.listdir(round_fd):
            if (change, session, task) in self._final:
                continue
            ref = Ref(change, session, task)
            seen = self._seen.get(ref)
            names = _listing(round_fd, task)
            if names is None:
                seen = _FINAL
            elif seen is None:
                seen = _read(round_fd, ref, names)
            elif not set(CLOSING_FILES).isdisjoint(names):
                seen = _FINAL  # the open claim just got its REPORT or RELEASE
            if seen is None:
                continue  # no TASK.md yet: look again next time
            if seen is _FINAL:
                self._final.add((change, session, task))
                self._seen.pop(ref, None)
                continue
            self._seen[ref] = seen
            if seen.claim is not None:
                found.append(replace(seen.claim, age_seconds=max(0.0, now - seen.since)))
        return found

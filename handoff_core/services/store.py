"""The store: every operation on one state root's handoff files, and the one way in for writes.

Each operation validates first, publishes write-once (``publish``, with ``allocation`` making the
directories of a new dispatch), reads back, and translates OS errors into ``StorageError`` here, once.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import wraps
from pathlib import Path
from typing import ParamSpec, TypeVar

from handoff_core.contract.ids import (
    Ref,
    check_change,
    check_ref,
    check_round,
    check_topic,
    is_change_id,
    next_task,
)
from handoff_core.contract.locator import parse_locator, render_locator
from handoff_core.contract.release import Release, render_release
from handoff_core.contract.report import Report, capture, normalise_report, render_report
from handoff_core.contract.task import Scope, Task, normalise_task, parse_task, render_task
from handoff_core.contract.validate import Verdict, check_handoff
from handoff_core.errors import (
    AlreadyReported,
    ChangeNotActive,
    ChangeNotFound,
    InvalidContent,
    LocatorConflict,
    NotFound,
    StorageError,
    TaskChanged,
    TaskNotFound,
    WriteConflict,
)
from handoff_core.files.allocation import find_retry, open_round, recent_rounds, undo
from handoff_core.files.paths import entry_mode, open_dir, read_regular, walked
from handoff_core.files.publishing import Published, publish
from handoff_core.files.reader import (
    TaskTree,
    locate_change,
    read_change_trees,
    read_entry,
    read_tree,
)
from handoff_core.services import session_logs
from handoff_core.services.claims import ClaimIndex
from handoff_core.services.ownership import Claim, check_dispatch
from handoff_core.services.status import TaskStatus, task_status

P = ParamSpec("P")
DEFAULT_WRITER_CAP = 3
RETRY_PROBE = "20000101T000000Z"  # a placeholder round for checks made before one is allocated
R = TypeVar("R")


def translated(fn: Callable[P, R]) -> Callable[P, R]:
    """OS errors leave the store as StorageError, with the cause chained."""

    @wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except OSError as exc:
            where = f" ({exc.filename})" if exc.filename else ""
            raise StorageError(
                f"the file system refused the operation: {exc.strerror or exc}{where}; nothing was half-written. "
                "Check permissions and free space, then retry"
            ) from exc

    return wrapper


@dataclass(frozen=True)
class TaskRequest:
    """What a Lead asks for; ids are allocated by the store."""

    change: str
    topic: str
    kind: str
    goal: str
    inputs: str
    scope: Scope
    acceptance: str
    return_notes: str = ""
    ticket: str | None = None
    session: str | None = None  # None opens a new round
    force_new: bool = False  # True: never answer with an identical task created just before


@dataclass(frozen=True)
class StoredFile:
    ref: Ref
    path: Path
    sha256: str
    created: bool
    text: str


@dataclass(frozen=True)
class StoredDocument:
    """A document published under the state root that belongs to no task (e.g. a session handoff)."""

    path: Path
    sha256: str


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def utc_now() -> datetime:
    return datetime.now(UTC)


class Store:
    def __init__(
        self,
        state_root: Path,
        project_root: Path | None = None,
        clock: Callable[[], datetime] = utc_now,
        writer_cap: int = DEFAULT_WRITER_CAP,
    ):
        self.state_root = Path(state_root).absolute()
        self.project_root = Path(project_root).absolute() if project_root else self.state_root
        self.clock = clock
        self.writer_cap = writer_cap
        self._claims = ClaimIndex()

    # -- paths -------------------------------------------------------------------------------

    def task_dir(self, ref: Ref, parts: tuple[str, ...] = ("specdev", "changes")) -> Path:
        return self.state_root.joinpath(*parts, ref.change, "sessions", ref.session, ref.task)

    def shown(self, path: Path) -> str:
        """Project-relative when inside the project, else absolute."""
        try:
            return path.relative_to(self.project_root).as_posix()
        except ValueError:
            return path.as_posix()

    @contextmanager
    def _task_fd(self, ref: Ref, *, active_only: bool = True) -> Iterator[int]:
        with locate_change(self.state_root, ref.change) as (facts, change_fd), ExitStack() as stack:
            if active_only and facts.location != "active":
                raise ChangeNotActive(f"change {ref.change} is archived; archived handoffs are frozen")
            fd = change_fd
            for part in ("sessions", ref.session, ref.task):
                try:
                    fd = open_dir(fd, part)
                except FileNotFoundError:
                    raise TaskNotFound(f"no task {ref}; check the ref returned by create_task") from None
                stack.callback(os.close, fd)
            yield fd

    # -- TASK --------------------------------------------------------------------------------

    @translated
    def create_task(self, request: TaskRequest) -> StoredFile:
        check_change(request.change)
        if request.session is not None:
            check_round(request.session)
        # Refuse bad content before anything is created: the same checks run again with the real ids.
        render_task(self._task_of(request, Ref(request.change, RETRY_PROBE, f"001-{check_topic(request.topic)}")))
        with self._locked(), locate_change(self.state_root, request.change) as (facts, change_fd):
            if facts.location != "active" or facts.outcome != "active":
                raise ChangeNotActive(
                    f"change {request.change} is {facts.location} with Outcome {facts.outcome or 'missing'}; "
                    "dispatch only into an active change (README.md line 'Outcome: active')"
                )
            sessions_fd = open_dir(change_fd, "sessions", create=True)
            try:
                return self._create_in(sessions_fd, request)
            finally:
                os.close(sessions_fd)

    @contextmanager
    def _locked(self) -> Iterator[None]:
        """One state-root lock serialises allocation (and the ownership check built on it)."""
        try:
            fd = os.open(self.state_root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except FileNotFoundError:
            raise ChangeNotFound(
                f"the state root {self.state_root} does not exist: the server never creates it or a change; "
                "create the change (specdev/changes/<id>/README.md) or pass the right --state-root"
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def _create_in(self, sessions_fd: int, request: TaskRequest) -> StoredFile:
        if not request.force_new and (earlier := self._find_retry(sessions_fd, request)) is not None:
            return earlier
        scope = normalise_task(self._task_of(request, Ref(request.change, RETRY_PROBE, "001-x"))).scope
        check_dispatch(request.kind, scope, self.claims(), self.writer_cap)
        session, round_fd, new_round = open_round(sessions_fd, request.session, self.clock())
        task_id = ""
        try:
            task_id = next_task(request.topic, os.listdir(round_fd))
            ref = Ref(request.change, session, task_id)
            task = self._task_of(request, ref)
            data = render_task(task).encode()
            task_fd = open_dir(round_fd, task_id, create=True)  # refuses case/Unicode collisions
            try:
                publish(task_fd, "TASK.md", data)
            finally:
                os.close(task_fd)
            return StoredFile(ref, self.task_dir(ref) / "TASK.md", sha256(data), True, data.decode())
        except BaseException:
            undo(sessions_fd, round_fd, session if new_round else None, task_id)
            raise
        finally:
            os.close(round_fd)

    def _find_retry(self, sessions_fd: int, request: TaskRequest) -> StoredFile | None:
        """The task an identical earlier request created (a caller that never saw the answer)."""
        rounds = [request.session] if request.session else recent_rounds(sessions_fd, self.clock())

        def expected(session: str, task: str) -> bytes:
            return render_task(self._task_of(request, Ref(request.change, session, task))).encode()

        if (found := find_retry(sessions_fd, rounds, request.topic, expected)) is None:
            return None
        ref = Ref(request.change, found[0], found[1])
        return StoredFile(ref, self.task_dir(ref) / "TASK.md", sha256(found[2]), False, found[2].decode())

    def claims(self) -> list[Claim]:
        """Writer claims of every outstanding implementation task under the state root."""
        return self._claims.claims(self.state_root, self.changes())

    def _task_of(self, request: TaskRequest, ref: Ref) -> Task:
        return normalise_task(
            Task(
                session=ref.session,
                task=ref.task,
                kind=request.kind,
                goal=request.goal,
                inputs=request.inputs,
                scope=request.scope,
                acceptance=request.acceptance,
                report_path=self.shown(self.task_dir(ref) / "REPORT.md"),
                return_notes=request.return_notes,
                change=ref.change,
                ticket=request.ticket,
            )
        )

    @translated
    def read_task(self, ref: Ref) -> tuple[Task, StoredFile]:
        with self._task_fd(ref, active_only=False) as fd:
            try:
                data = read_regular(fd, "TASK.md")
            except FileNotFoundError:
                raise TaskNotFound(f"task {ref} has no TASK.md; it was never dispatched") from None
        text = data.decode("utf-8", "replace")
        return parse_task(text), StoredFile(ref, self.task_dir(ref) / "TASK.md", sha256(data), False, text)

    # -- REPORT, locator, RELEASE --------------------------------------------------------------

    @translated
    def write_report(self, report: Report, change: str, task_sha256: str | None = None) -> StoredFile:
        """Publish the executor's REPORT once, pinned to the TASK it answers."""
        ref = check_ref(change, report.session, report.task)
        with self._task_fd(ref) as fd:
            current = sha256(read_regular(fd, "TASK.md"))
            if task_sha256 is not None and task_sha256 != current:
                raise TaskChanged(
                    f"TASK.md of {ref} is not the one you were given (sha256 {current}); read_task again and "
                    "ask the Lead before reporting"
                )
            data = render_report(replace(normalise_report(report), task_sha256=current)).encode()
            published = self._publish_once(fd, "REPORT.md", data, ref)
        return StoredFile(ref, self.task_dir(ref) / "REPORT.md", sha256(data), published.created, data.decode())

    def capture_report(self, ref: Ref, status: str, locator: str, text: str) -> StoredFile:
        report = capture(ref.session, ref.task, status, locator, text, None)
        return self.write_report(report, ref.change)

    @staticmethod
    def _publish_once(fd: int, name: str, data: bytes, ref: Ref) -> Published:
        try:
            return publish(fd, name, data)
        except WriteConflict as exc:
            raise WriteConflict(
                f"{ref} already has a {name} with other content; it is written once and was left unchanged. "
                "Read it with read_handoff; a fix or retry is a new task"
            ) from exc

    @translated
    def record_session_locator(self, ref: Ref, path: str, verify: bool = True) -> StoredFile:
        """Publish the executor's log path; with ``verify``, only once this host confirms it is this task's log."""
        data = render_locator(path)
        if verify:
            task = self.task_dir(ref) / "TASK.md"
            session_logs.verify(path, [str(ref), f"{ref.session}/{ref.task}", self.shown(task), str(task)])
        with self._task_fd(ref) as fd:
            existing = read_entry(fd, "session-locator.json")
            if existing.data is not None:
                value, _ = parse_locator(existing.data)
                if isinstance(value, dict) and value.get("path") == path:
                    return StoredFile(
                        ref, self.task_dir(ref) / "session-locator.json", sha256(existing.data), False, path
                    )
                raise LocatorConflict(
                    f"{ref} already records another session log ({value!r}); the original stays. "
                    "Check which log belongs to this task"
                )
            published = publish(fd, "session-locator.json", data)
        return StoredFile(ref, self.task_dir(ref) / "session-locator.json", sha256(data), published.created, path)

    @translated
    def release_writer(self, ref: Ref, kind: str, evidence: str, details: str = "") -> StoredFile:
        data = render_release(Release(ref.session, ref.task, kind, evidence), details).encode()
        with self._task_fd(ref) as fd:
            if read_entry(fd, "REPORT.md").kind != "missing":
                raise AlreadyReported(f"{ref} already has a REPORT: its claim has ended, nothing to release")
            read_regular(fd, "TASK.md")
            published = self._publish_once(fd, "RELEASE.md", data, ref)
        return StoredFile(ref, self.task_dir(ref) / "RELEASE.md", sha256(data), published.created, data.decode())

    # -- other documents under the state root -------------------------------------------------

    @translated
    def publish_new(self, folder: tuple[str, ...], choose: Callable[[set[str]], str], data: bytes) -> StoredDocument:
        """Publish ``data`` write-once under a name ``choose`` picks from the names already taken."""
        with self._locked(), walked(self.state_root, folder, create=True) as fd:
            name = choose(set(os.listdir(fd)))
            publish(fd, name, data)
        return StoredDocument(self.state_root.joinpath(*folder, name), sha256(data))

    @translated
    def read_optional(self, *parts: str) -> bytes | None:
        """A file below the state root, or None when it (or a folder on the way) does not exist."""
        try:
            with walked(self.state_root, parts[:-1]) as fd:
                return read_regular(fd, parts[-1])
        except FileNotFoundError:
            return None

    @translated
    def project_has(self, relative: str) -> bool:
        """Whether a project-relative path exists, walked without following symlinks on the way."""
        parts = relative.split("/")
        if relative.startswith("/") or any(p in ("", ".", "..") for p in parts):
            raise InvalidContent(f"{relative!r} is not a project-relative path (no leading '/', '.', '..')")
        try:
            with walked(self.project_root, parts[:-1]) as fd:
                return entry_mode(fd, parts[-1]) is not None
        except (FileNotFoundError, NotADirectoryError):
            return False

    # -- reading -------------------------------------------------------------------------------

    @translated
    def arrivals(self, refs: list[Ref]) -> dict[Ref, str]:
        """Which of ``refs`` have a REPORT.md (or else a RELEASE.md) now."""
        found: dict[Ref, str] = {}
        for ref in refs:
            with self._task_fd(ref, active_only=False) as fd:
                name = next((n for n in ("REPORT.md", "RELEASE.md") if entry_mode(fd, n) is not None), None)
            if name is not None:
                found[ref] = name
        return found

    @translated
    def read_file(self, ref: Ref, name: str) -> bytes:
        """One handoff file of a task, refused unless it is a regular, singly linked file."""
        with self._task_fd(ref, active_only=False) as fd:
            try:
                return read_regular(fd, name)
            except FileNotFoundError:
                raise NotFound(f"{ref} has no {name}") from None

    def tree(self, ref: Ref) -> TaskTree:
        return read_tree(self.state_root, ref.change, ref.session, ref.task)

    def validate(self, ref: Ref, stage: str) -> Verdict:
        return check_handoff(lambda: self.tree(ref), stage, ref.change, ref.session, ref.task)

    def changes(self) -> list[str]:
        """Ids of the active changes (directories under specdev/changes with a valid id)."""
        folder = self.state_root / "specdev" / "changes"
        try:
            return sorted(n for n in os.listdir(folder) if is_change_id(n) and not (folder / n).is_symlink())
        except FileNotFoundError:
            return []

    @translated
    def status(self, change: str | None = None, session: str | None = None) -> list[TaskStatus]:
        """Every task's derived state, for one change (and round) or all active changes."""
        if session is not None:
            check_round(session)
        now = time.time()
        found: list[TaskStatus] = []
        for name in [check_change(change)] if change else self.changes():
            for round_id, task, tree in read_change_trees(self.state_root, name, session):
                found.append(task_status(Ref(name, round_id, task), tree, now))
        return found


__all__ = ["Store", "StoredDocument", "StoredFile", "TaskRequest"]

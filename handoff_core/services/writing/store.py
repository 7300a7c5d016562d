"""The store: the write use cases of one state root, and the one way in for writes.

Each use case checks its input first, then publishes write-once under the state-root lock where
ids are allocated, and reads back. Reads live in ``queries``; the store keeps one for the
claims a dispatch is checked against.
"""

from __future__ import annotations

import fcntl
import logging
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from handoff_core.contract.change import ChangeFacts
from handoff_core.contract.ids import Ref, check_change, check_ref, check_round, check_topic, next_task
from handoff_core.contract.locator import parse_locator, render_locator
from handoff_core.contract.proof import SIGNING_KEY_LABEL, sign_report
from handoff_core.contract.release import Release, render_release
from handoff_core.contract.report import Report, capture, normalise_report, render_report
from handoff_core.contract.task import Task, TaskBody, check_body, render_checked, task_of
from handoff_core.contract.validate import closes_claim, report_problems, task_problems
from handoff_core.errors import (
    AlreadyReported,
    ChangeNotActive,
    ChangeNotFound,
    HandoffError,
    InvalidContent,
    LocatorConflict,
    StateRefused,
    TaskChanged,
    TaskNotFound,
    WriteConflict,
)
from handoff_core.files.allocation import find_retry, open_round, recent_rounds, undo
from handoff_core.files.leftovers import Leftover, remove_leftover
from handoff_core.files.paths import entry_mode, open_dir, walked
from handoff_core.files.publishing import publish
from handoff_core.files.reader import locate_change
from handoff_core.files.task_dir import Roots, StoredFile, open_task_dir, sha256, translated
from handoff_core.layout import (
    ACTIVE_LINE,
    ATTEMPTS_BEFORE_WARNING,
    CHANGE_README,
    CLOSING_FILES,
    DEFAULT_WRITER_CAP,
    LOCATOR_FILE,
    MAX_FILE_BYTES,
    RELEASE_FILE,
    REPORT_FILE,
    SESSIONS,
    TASK_FILE,
    UNFINISHED_STATUSES,
    ReleaseKind,
    ReportStatus,
)
from handoff_core.services.logs import session_logs
from handoff_core.services.rules.ownership import check_dispatch
from handoff_core.services.tree.disk_cache import DiskCache
from handoff_core.services.tree.queries import Queries
from handoff_core.services.writing.workspaces import pin_workspace

logger = logging.getLogger(__name__)

__all__ = ["Store", "StoredDocument", "StoredFile", "TaskRequest"]


@dataclass(kw_only=True, frozen=True)
class TaskRequest:
    """What a Lead asks for; ids are allocated by the store."""

    change: str
    topic: str
    body: TaskBody
    session: str | None = None  # None opens a new round
    force_new: bool = False  # True: never answer with an identical task created just before
    token_check: Callable[[Ref], str] | None = None  # the hash of the task's report token, once its ref is known
    writer_limit: int | None = None  # the plan's declared limit of parallel writers; none declared: one
    retry_of: Ref | None = None  # the earlier task this one fixes or retries
    signing_key: Callable[[Ref], str] | None = None  # the public key its report token seeds (contract.proof)


@dataclass(frozen=True)
class StoredDocument:
    """A document published under the state root that belongs to no task (e.g. a session handoff)."""

    path: Path
    sha256: str


LEFTOVER_MIN_AGE = 60.0  # a publish finishes in milliseconds; a minute-old temp file is nobody's


def bounded(data: bytes, name: str) -> bytes:
    """Refuse, before publishing, a file that every reader would refuse as too large."""
    if len(data) > MAX_FILE_BYTES:
        raise InvalidContent(
            f"{name} would be {len(data)} bytes, over the {MAX_FILE_BYTES}-byte limit for handoff files; "
            "shorten it and reference large material by path"
        )
    return data


def _verb(created: bool) -> str:
    return "published" if created else "found the same bytes already in"


def _ticket(store: Store, ref: Ref) -> str | None:
    try:
        return store.queries.read_task(ref)[0].ticket
    except HandoffError as exc:  # an unreadable earlier TASK counts as one without a ticket
        logger.debug("ticket of %s unreadable: %s", ref, exc.code)
        return None


def _returnable(text: str, ref: Ref, task_sha: str, accept_warnings: bool) -> None:
    errors, warnings = report_problems(text, ref.session, ref.task, task_sha)
    if errors:
        raise InvalidContent(f"the REPORT would not pass the return stage ({'; '.join(errors)}): fix it")
    if warnings and not accept_warnings:
        raise InvalidContent(
            f"the REPORT would warn ({'; '.join(warnings)}); it is written once: fix it, or call again with "
            "accept_warnings=true to publish it as it is"
        )


def utc_now() -> datetime:
    return datetime.now(UTC)


def _require_active(facts: ChangeFacts, change_fd: int) -> None:
    if facts.location == "active" and facts.outcome == "active":
        return
    readme = "/".join((*facts.parts, CHANGE_README))
    if facts.location == "active" and entry_mode(change_fd, CHANGE_README) is None:
        why = f"change {facts.change} has no {CHANGE_README}, so it is not active yet: create {readme}"
    elif facts.location == "active" and facts.unreadable:
        why = f"change {facts.change} cannot be read as active: {facts.unreadable}; make {readme} a plain file with"
    elif facts.location == "active" and facts.outcome is None:
        why = f"{readme} has no single valid Outcome line (missing, repeated or unknown): put in it"
    else:
        why = f"change {facts.change} is {facts.location} with Outcome {facts.outcome or 'missing'}; dispatch only "
        why += f"into an active change, whose {readme} under specdev/changes/ has"
    raise ChangeNotActive(f"{why} the one line '{ACTIVE_LINE}'")


class Store:
    def __init__(
        self,
        state_root: Path,
        project_root: Path | None = None,
        clock: Callable[[], datetime] = utc_now,
        writer_cap: int = DEFAULT_WRITER_CAP,
        cache_dir: Path | None = None,
    ):
        state = Path(state_root).absolute()
        self.roots = Roots(state, Path(project_root).absolute() if project_root else state)
        self.queries = Queries(self.roots, cache=DiskCache(cache_dir, state) if cache_dir is not None else None)
        self.clock = clock
        self.writer_cap = writer_cap

    # -- TASK --------------------------------------------------------------------------------

    @translated
    def create_task(self, request: TaskRequest) -> StoredFile:
        check_change(request.change)
        if request.session is not None:
            check_round(request.session)
        check_topic(request.topic)
        body = check_body(request.body)  # the one check of the Lead's text, before anything is made
        if request.retry_of is not None:
            body = self._citing(request.retry_of, body)
        with self._locked(), locate_change(self.roots.state_root, request.change) as (facts, change_fd):
            _require_active(facts, change_fd)
            # Read from git under the lock: the base is the branch tip at the moment of dispatch.
            body = body._replace(
                scope=pin_workspace(self.roots.project_root, self.roots.state_root, body.kind, body.scope)
            )
            sessions_fd = open_dir(change_fd, SESSIONS, create=True)
            try:
                return self._create_in(sessions_fd, request, body)
            finally:
                os.close(sessions_fd)

    @contextmanager
    def _locked(self) -> Iterator[None]:
        """One state-root lock serialises allocation (and the ownership check built on it)."""
        try:
            fd = os.open(self.roots.state_root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except FileNotFoundError:
            raise ChangeNotFound(
                f"the state root {self.roots.state_root} does not exist: the server never creates it or a change; "
                "create the change (specdev/changes/<id>/README.md) or pass the right --state-root"
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def _create_in(self, sessions_fd: int, request: TaskRequest, body: TaskBody) -> StoredFile:
        if not request.force_new and (earlier := self._find_retry(sessions_fd, request, body)) is not None:
            return earlier
        check_dispatch(body.kind, body.scope, self.queries.claims, request.writer_limit, self.writer_cap)
        session, round_fd, new_round = open_round(sessions_fd, request.session, self.clock())
        task_id = ""
        try:
            task_id = next_task(request.topic, os.listdir(round_fd))
            ref = Ref(request.change, session, task_id)
            text = render_checked(self._task_of(request, body, ref))
            if problems := task_problems(text, ref.change, ref.session, ref.task):  # never publish a frozen refusal
                raise InvalidContent(f"the TASK would not pass validation ({'; '.join(problems)}): rewrite that text")
            data = bounded(text.encode(), TASK_FILE)
            # Everything that can fail runs before the publish: nothing after it may.
            warnings = self._attempt_warnings(request, body) if request.retry_of is not None else ()
            task_fd = open_dir(round_fd, task_id, create=True)  # refuses case/Unicode collisions
            try:
                publish(task_fd, TASK_FILE, data)
            finally:
                os.close(task_fd)
            logger.info("published %s of %s (%s, sha256 %s)", TASK_FILE, ref, body.kind, sha256(data))
            return StoredFile(
                ref=ref,
                path=self.roots.task_dir(ref) / TASK_FILE,
                sha256=sha256(data),
                created=True,
                text=data.decode(),
                warnings=warnings,
            )
        except BaseException:
            undo(sessions_fd, round_fd, session if new_round else None, task_id)
            raise
        finally:
            os.close(round_fd)

    def _citing(self, earlier: Ref, body: TaskBody) -> TaskBody:
        """The new task cites the earlier one's REPORT (or RELEASE); refused while it may still be writing."""
        snapshot = self.queries.snapshot(earlier)
        if not snapshot.task_found or snapshot.file(TASK_FILE).kind == "missing":
            raise TaskNotFound(f"retry_of {earlier}: no such task; give the ref of the task this one retries")
        ended = [n for n in CLOSING_FILES if closes_claim(snapshot.file(n), n, earlier.session, earlier.task)]
        if not ended:
            raise StateRefused(
                f"{earlier} has neither a REPORT nor a RELEASE: its executor may still be writing. Wait for its "
                "REPORT (wait_for_reports), or release it with evidence (release_writer), then retry"
            )
        data = snapshot.file(ended[0]).data or b""
        where = self.roots.shown(self.roots.task_dir(earlier) / ended[0])
        cite = f"- Retry of `{earlier}`: read its {ended[0]} first, `{where}` (sha256 {sha256(data)})."
        return body._replace(inputs=f"{body.inputs}\n{cite}")

    def _attempt_warnings(self, request: TaskRequest, body: TaskBody) -> tuple[str, ...]:
        """After three blocked or failed attempts on one topic or ticket, the Lead is told before a fourth."""
        ended = [t for t in self.queries.status(request.change) if t.report_status in UNFINISHED_STATUSES]
        by_topic = [t for t in ended if t.ref.task.split("-", 1)[-1] == request.topic]
        by_ticket = [t for t in ended if body.ticket is not None and _ticket(self, t.ref) == body.ticket]
        count = max(len(by_topic), len(by_ticket))
        if count < ATTEMPTS_BEFORE_WARNING:
            return ()
        return (f"{count} earlier attempts on this topic or ticket ended blocked or failed: reconsider the plan",)

    def _find_retry(self, sessions_fd: int, request: TaskRequest, body: TaskBody) -> StoredFile | None:
        """The task an identical earlier request created (a caller that never saw the answer)."""
        rounds = [request.session] if request.session else recent_rounds(sessions_fd, self.clock())

        def expected(session: str, task: str) -> bytes:
            return render_checked(self._task_of(request, body, Ref(request.change, session, task))).encode()

        if (found := find_retry(sessions_fd, rounds, request.topic, expected)) is None:
            return None
        ref = Ref(request.change, found[0], found[1])
        return StoredFile(
            ref=ref,
            path=self.roots.task_dir(ref) / TASK_FILE,
            sha256=sha256(found[2]),
            created=False,
            text=found[2].decode(),
        )

    def _task_of(self, request: TaskRequest, body: TaskBody, ref: Ref) -> Task:
        report_path = self.roots.shown(self.roots.task_dir(ref) / REPORT_FILE)
        check = request.token_check(ref) if request.token_check else None
        key = request.signing_key(ref) if request.signing_key else None
        return task_of(
            body,
            session=ref.session,
            task=ref.task,
            change=ref.change,
            report_path=report_path,
            token_check=check,
            signing_key=key,
        )

    # -- REPORT, locator, RELEASE --------------------------------------------------------------

    @translated
    def write_report(
        self,
        report: Report,
        change: str,
        task_sha256: str | None = None,
        accept_warnings: bool = False,
        token: str | None = None,
    ) -> StoredFile:
        """Publish the executor's REPORT once, pinned to the TASK it answers, only if it would pass the
        return stage; a warning refuses it too, unless accepted (it can never be rewritten). With the
        task's ``token`` (already checked) it is signed when its TASK records a signing key."""
        ref = check_ref(change, report.session, report.task)
        with open_task_dir(self.roots.state_root, ref) as task_dir:
            task_data = task_dir.read(TASK_FILE)
            current = sha256(task_data)
            if task_sha256 is not None and task_sha256 != current:
                raise TaskChanged(
                    f"TASK.md of {ref} is not the one you were given (sha256 {current}); read_task again and "
                    "ask the Lead before reporting"
                )
            text = render_report(normalise_report(report)._replace(task_sha256=current))
            if token is not None and SIGNING_KEY_LABEL.encode() in task_data:
                text = sign_report(text, token)
            _returnable(text, ref, current, accept_warnings)
            data = bounded(text.encode(), REPORT_FILE)
            published = task_dir.publish(REPORT_FILE, data)
        logger.info("%s %s of %s (status %s)", _verb(published.created), REPORT_FILE, ref, report.status)
        return StoredFile(
            ref=ref,
            path=self.roots.task_dir(ref) / REPORT_FILE,
            sha256=sha256(data),
            created=published.created,
            text=data.decode(),
        )

    def capture_report(
        self, ref: Ref, status: ReportStatus, locator: str, text: str, token: str | None = None
    ) -> StoredFile:
        report = capture(ref.session, ref.task, status, locator, text, None)
        return self.write_report(report, ref.change, accept_warnings=True, token=token)  # verbatim: nothing to rewrite

    @translated
    def record_session_locator(self, ref: Ref, path: str, verify: bool = True) -> StoredFile:
        """Publish the executor's log path; with ``verify``, only once this host confirms it is this task's log."""
        data = render_locator(path)
        if verify:
            session_logs.verify(path, self.queries.log_needles(ref))
        where = self.roots.task_dir(ref) / LOCATOR_FILE
        with open_task_dir(self.roots.state_root, ref) as task_dir:
            existing = task_dir.entry(LOCATOR_FILE)
            if existing.data is not None:
                value, _ = parse_locator(existing.data)
                if isinstance(value, dict) and value.get("path") == path:
                    return StoredFile(ref=ref, path=where, sha256=sha256(existing.data), created=False, text=path)
                raise LocatorConflict(
                    f"{ref} already records another session log ({value!r}); the original stays. "
                    "Check which log belongs to this task"
                )
            try:
                published = task_dir.publish(LOCATOR_FILE, data)
            except WriteConflict as exc:  # another Lead call won the race with another path
                raise LocatorConflict(
                    f"{ref} got another session log path at the same moment; the first stays. Read it back"
                ) from exc
        return StoredFile(ref=ref, path=where, sha256=sha256(data), created=published.created, text=path)

    @translated
    def release_writer(self, ref: Ref, kind: ReleaseKind, evidence: str, details: str = "") -> StoredFile:
        data = render_release(Release(ref.session, ref.task, kind, evidence), details).encode()
        with open_task_dir(self.roots.state_root, ref) as task_dir:
            if closes_claim(task_dir.entry(REPORT_FILE), REPORT_FILE, ref.session, ref.task):
                raise AlreadyReported(f"{ref} already has a REPORT: its claim has ended, nothing to release")
            if not task_dir.has(TASK_FILE):  # present is enough: an unreadable TASK still holds a claim to end
                raise TaskNotFound(f"task {ref} has no {TASK_FILE}; there is no claim to release")
            published = task_dir.publish(RELEASE_FILE, bounded(data, RELEASE_FILE))
        logger.info("%s %s of %s (writers %s)", _verb(published.created), RELEASE_FILE, ref, kind)
        return StoredFile(
            ref=ref,
            path=self.roots.task_dir(ref) / RELEASE_FILE,
            sha256=sha256(data),
            created=published.created,
            text=data.decode(),
        )

    @translated
    def remove_leftovers(self, min_age_seconds: float = LEFTOVER_MIN_AGE) -> list[Leftover]:
        """Remove the leftovers at least ``min_age_seconds`` old (younger ones may be a publish in flight)."""
        with self._locked():
            old = [item for item in self.queries.leftovers() if item.age_seconds >= min_age_seconds]
            return [item for item in old if remove_leftover(self.roots.state_root, item)]

    # -- other documents under the state root -------------------------------------------------

    @translated
    def publish_new(self, folder: tuple[str, ...], choose: Callable[[set[str]], str], data: bytes) -> StoredDocument:
        """Publish ``data`` write-once under a name ``choose`` picks from the names already taken."""
        with self._locked(), walked(self.roots.state_root, folder, create=True) as fd:
            name = choose(set(os.listdir(fd)))
            publish(fd, name, data)
        return StoredDocument(self.roots.state_root.joinpath(*folder, name), sha256(data))

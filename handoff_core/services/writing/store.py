"""The store: the write use cases of one state root, and the one way in for writes.

Each use case checks its input first, then publishes write-once under the state-root lock where
ids are allocated, and reads back; a new TASK is made in ``dispatch``. Reads live in ``queries``;
the store keeps one for the claims a dispatch is checked against.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from handoff_core.contract.anchor import TASK_CHANGED, TASK_UNANCHORED
from handoff_core.contract.ids import Ref, check_ref
from handoff_core.contract.locator import parse_locator, render_locator
from handoff_core.contract.proof import SIGNING_KEY_LABEL, sign_report
from handoff_core.contract.release import Release, render_release
from handoff_core.contract.report import Report, capture, normalise_report, render_report
from handoff_core.contract.validate import closes_claim, report_problems
from handoff_core.errors import (
    AlreadyReported,
    InvalidContent,
    InvalidLocator,
    LocatorConflict,
    TaskChanged,
    TaskNotFound,
    WriteConflict,
)
from handoff_core.files.change_dir import locate_change
from handoff_core.files.leftovers import Leftover, remove_leftover
from handoff_core.files.locking import lock_state_root
from handoff_core.files.paths import open_dir, walked
from handoff_core.files.publishing import publish
from handoff_core.files.task_dir import Roots, StoredFile, open_task_dir, sha256, translated
from handoff_core.layout import (
    DEFAULT_WRITER_CAP,
    LOCATOR_FILE,
    RELEASE_FILE,
    REPORT_FILE,
    SESSIONS,
    TASK_FILE,
    ReleaseKind,
    ReportStatus,
)
from handoff_core.services.logs import session_logs
from handoff_core.services.tree.queries import Queries
from handoff_core.services.writing.dispatch import TaskRequest, bounded, checked_body, create_in, require_active
from handoff_core.services.writing.workspaces import pin_workspace

logger = logging.getLogger(__name__)

__all__ = ["Store", "StoredDocument", "StoredFile"]


@dataclass(frozen=True)
class StoredDocument:
    """A document published under the state root that belongs to no task (e.g. a session handoff)."""

    path: Path
    sha256: str


LEFTOVER_MIN_AGE = 60.0  # a publish finishes in milliseconds; a minute-old temp file is nobody's


def _verb(created: bool) -> str:
    return "published" if created else "found the same bytes already in"


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


class Store:
    def __init__(
        self,
        state_root: Path,
        project_root: Path | None = None,
        clock: Callable[[], datetime] = utc_now,
        writer_cap: int = DEFAULT_WRITER_CAP,
    ):
        state = Path(state_root).absolute()
        self.roots = Roots(state, Path(project_root).absolute() if project_root else state)
        self.queries = Queries(self.roots)
        self.clock = clock
        self.writer_cap = writer_cap

    # -- TASK --------------------------------------------------------------------------------

    @translated
    def create_task(self, request: TaskRequest) -> StoredFile:
        body = checked_body(self, request)
        with (
            lock_state_root(self.roots.state_root),
            locate_change(self.roots.state_root, request.change) as (facts, change_fd),
        ):
            require_active(facts, change_fd)
            # Read from git under the lock: the base is the branch tip at the moment of dispatch.
            body = body._replace(
                scope=pin_workspace(self.roots.project_root, self.roots.state_root, body.kind, body.scope)
            )
            sessions_fd = open_dir(change_fd, SESSIONS, create=True)
            try:
                return create_in(self, sessions_fd, request, body)
            finally:
                os.close(sessions_fd)

    # -- REPORT, locator, RELEASE --------------------------------------------------------------

    @translated
    def write_report(
        self,
        report: Report,
        change: str,
        task_sha256: str | None = None,
        accept_warnings: bool = False,
        token: str | None = None,
        *,
        captured: bool = False,
    ) -> StoredFile:
        """Publish the executor's REPORT once, pinned to the TASK it answers, only if it would pass the
        return stage; a warning refuses it too, unless accepted (it can never be rewritten). With the
        task's ``token`` (already checked) it is signed when its TASK records a signing key."""
        ref = check_ref(change, report.session, report.task)
        with open_task_dir(self.roots.state_root, ref) as task_dir:
            task_data = task_dir.read(TASK_FILE)
            current = sha256(task_data)
            self._check_anchor(ref, task_data, captured=captured)
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
        return self.roots.stored(ref, REPORT_FILE, data, published.created)

    def capture_report(
        self, ref: Ref, status: ReportStatus, locator: str, text: str, token: str | None = None
    ) -> StoredFile:
        report = capture(ref.session, ref.task, status, locator, text, None)
        # verbatim: nothing to rewrite
        return self.write_report(report, ref.change, accept_warnings=True, token=token, captured=True)

    def _check_anchor(self, ref: Ref, task: bytes, *, captured: bool) -> None:
        """A REPORT answers the TASK the Lead published, when this store can tell (it holds the Lead's
        anchor): a changed TASK is refused (in a state root the Lead's secret governs, one with no anchor
        too), and so is a TASK with no anchor elsewhere unless the Lead captures."""
        anchor = self.queries.anchor
        if anchor is None:  # an executor's server elsewhere: the Lead's reads flag a changed TASK
            return
        state = anchor.state(str(ref), task)
        if state == "changed":
            raise TaskChanged(f"{ref}: {TASK_CHANGED}")
        if state == "unanchored" and not captured:
            raise TaskChanged(
                f"{ref}: {TASK_UNANCHORED}; a report for it is written with the Lead's capture_report, "
                "or the Lead dispatches it again"
            )

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

    def record_found_locator(self, ref: Ref, session_ids: list[str], home: Path, env: dict[str, str]) -> StoredFile:
        """Find the executor's log by its session id (Claude Code's, then Codex's, as this host keeps them),
        confirm it as this task's, and record it; refused unless exactly one log confirms."""
        needles = self.queries.log_needles(ref)
        places = session_logs.homes(home, env, self.roots.state_root, str(ref))
        found = [
            path
            for session_id in session_ids
            for tool in session_logs.TOOLS
            for path in session_logs.found_logs(tool, session_id, home, env, places)
        ]
        confirmed = [path for path in dict.fromkeys(found) if session_logs.inspect(path, needles).ok]
        if len(confirmed) != 1:
            where = "no log of" if not confirmed else f"{len(confirmed)} logs confirm for"
            raise InvalidLocator(
                f"{where} session {', '.join(session_ids)} on this host for {ref}: pass the log's absolute path, "
                "or the executor's session id (Codex: the thread_id `codex exec --json` printed)"
            )
        return self.record_session_locator(ref, confirmed[0])

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
        return self.roots.stored(ref, RELEASE_FILE, data, published.created)

    @translated
    def remove_leftovers(self, min_age_seconds: float = LEFTOVER_MIN_AGE) -> list[Leftover]:
        """Remove the leftovers at least ``min_age_seconds`` old (younger ones may be a publish in flight)."""
        with lock_state_root(self.roots.state_root):
            old = [item for item in self.queries.leftovers() if item.age_seconds >= min_age_seconds]
            return [item for item in old if remove_leftover(self.roots.state_root, item)]

    # -- other documents under the state root -------------------------------------------------

    @translated
    def publish_new(self, folder: tuple[str, ...], choose: Callable[[set[str]], str], data: bytes) -> StoredDocument:
        """Publish ``data`` write-once under a name ``choose`` picks from the names already taken."""
        with lock_state_root(self.roots.state_root), walked(self.roots.state_root, folder, create=True) as fd:
            name = choose(set(os.listdir(fd)))
            publish(fd, name, data)
        return StoredDocument(self.roots.state_root.joinpath(*folder, name), sha256(data))

"""A dispatch: a Lead's request checked, then answered by the identical task made before or published anew."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from handoff_core.contract.anchor import anchored
from handoff_core.contract.change import ChangeFacts
from handoff_core.contract.ids import Ref, check_change, check_round, check_topic, next_task
from handoff_core.contract.task import Task, TaskBody, check_body, task_of
from handoff_core.contract.task_file import render_checked
from handoff_core.contract.validate import closes_claim, task_problems
from handoff_core.errors import ChangeNotActive, HandoffError, InvalidContent, StateRefused, TaskNotFound
from handoff_core.files.allocation import find_retry, open_round, recent_rounds, undo
from handoff_core.files.paths import entry_mode, open_dir
from handoff_core.files.publishing import publish
from handoff_core.files.task_dir import StoredFile, sha256
from handoff_core.layout import (
    ACTIVE_LINE,
    ATTEMPTS_BEFORE_WARNING,
    CHANGE_README,
    CLOSING_FILES,
    MAX_FILE_BYTES,
    REPORT_FILE,
    TASK_FILE,
    UNFINISHED_STATUSES,
)
from handoff_core.services.rules.ownership import check_dispatch

if TYPE_CHECKING:
    from handoff_core.services.writing.store import Store

logger = logging.getLogger(__name__)

__all__ = ["TaskRequest", "bounded", "checked_body", "create_in", "require_active"]


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


def bounded(data: bytes, name: str) -> bytes:
    """Refuse, before publishing, a file that every reader would refuse as too large."""
    if len(data) > MAX_FILE_BYTES:
        raise InvalidContent(
            f"{name} would be {len(data)} bytes, over the {MAX_FILE_BYTES}-byte limit for handoff files; "
            "shorten it and reference large material by path"
        )
    return data


def _ticket(store: Store, ref: Ref) -> str | None:
    try:
        return store.queries.read_task(ref)[0].ticket
    except HandoffError as exc:  # an unreadable earlier TASK counts as one without a ticket
        logger.debug("ticket of %s unreadable: %s", ref, exc.code)
        return None


def require_active(facts: ChangeFacts, change_fd: int) -> None:
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


def checked_body(store: Store, request: TaskRequest) -> TaskBody:
    """The request's ids and text checked, citing what it retries: all of it before anything is made."""
    check_change(request.change)
    if request.session is not None:
        check_round(request.session)
    check_topic(request.topic)
    body = check_body(request.body)  # the one check of the Lead's text, before anything is made
    if request.retry_of is not None:
        body = _citing(store, request.retry_of, body)
    return body


def create_in(store: Store, sessions_fd: int, request: TaskRequest, body: TaskBody) -> StoredFile:
    """The TASK of ``request`` in its round: an identical one created just before, or a new one published."""
    if not request.force_new and (earlier := _find_retry(store, sessions_fd, request, body)) is not None:
        return earlier
    check_dispatch(body.kind, body.scope, store.queries.claims, request.writer_limit, store.writer_cap)
    session, round_fd, new_round = open_round(sessions_fd, request.session, store.clock())
    task_id = ""
    try:
        task_id = next_task(request.topic, os.listdir(round_fd))
        ref = Ref(request.change, session, task_id)
        text = _rendered(store, request, body, ref)
        if problems := task_problems(text, ref.change, ref.session, ref.task):  # never publish a frozen refusal
            raise InvalidContent(f"the TASK would not pass validation ({'; '.join(problems)}): rewrite that text")
        data = bounded(text.encode(), TASK_FILE)
        # Everything that can fail runs before the publish: nothing after it may.
        warnings = _attempt_warnings(store, request, body) if request.retry_of is not None else ()
        task_fd = open_dir(round_fd, task_id, create=True)  # refuses case/Unicode collisions
        try:
            publish(task_fd, TASK_FILE, data)
        finally:
            os.close(task_fd)
        logger.info("published %s of %s (%s, sha256 %s)", TASK_FILE, ref, body.kind, sha256(data))
        return store.roots.stored(ref, TASK_FILE, data, True, warnings)
    except BaseException:
        undo(sessions_fd, round_fd, session if new_round else None, task_id)
        raise
    finally:
        os.close(round_fd)


def _citing(store: Store, earlier: Ref, body: TaskBody) -> TaskBody:
    """The new task cites the earlier one's REPORT (or RELEASE); refused while it may still be writing."""
    snapshot = store.queries.snapshot(earlier)
    if not snapshot.task_found or snapshot.file(TASK_FILE).kind == "missing":
        raise TaskNotFound(f"retry_of {earlier}: no such task; give the ref of the task this one retries")
    ended = [n for n in CLOSING_FILES if closes_claim(snapshot.file(n), n, earlier.session, earlier.task)]
    if not ended:
        raise StateRefused(
            f"{earlier} has neither a REPORT nor a RELEASE: its executor may still be writing. Wait for its "
            "REPORT (wait_for_reports), or release it with evidence (release_writer), then retry"
        )
    data = snapshot.file(ended[0]).data or b""
    where = store.roots.shown(store.roots.task_dir(earlier) / ended[0])
    cite = f"- Retry of `{earlier}`: read its {ended[0]} first, `{where}` (sha256 {sha256(data)})."
    return body._replace(inputs=f"{body.inputs}\n{cite}")


def _attempt_warnings(store: Store, request: TaskRequest, body: TaskBody) -> tuple[str, ...]:
    """After three blocked or failed attempts on one topic or ticket, the Lead is told before a fourth."""
    ended = [t for t in store.queries.status(request.change) if t.report_status in UNFINISHED_STATUSES]
    by_topic = [t for t in ended if t.ref.task.split("-", 1)[-1] == request.topic]
    by_ticket = [t for t in ended if body.ticket is not None and _ticket(store, t.ref) == body.ticket]
    count = max(len(by_topic), len(by_ticket))
    if count < ATTEMPTS_BEFORE_WARNING:
        return ()
    return (f"{count} earlier attempts on this topic or ticket ended blocked or failed: reconsider the plan",)


def _find_retry(store: Store, sessions_fd: int, request: TaskRequest, body: TaskBody) -> StoredFile | None:
    """The task an identical earlier request created (a caller that never saw the answer)."""
    rounds = [request.session] if request.session else recent_rounds(sessions_fd, store.clock())

    def expected(session: str, task: str) -> bytes:
        return _rendered(store, request, body, Ref(request.change, session, task)).encode()

    if (found := find_retry(sessions_fd, rounds, request.topic, expected)) is None:
        return None
    return store.roots.stored(Ref(request.change, found[0], found[1]), TASK_FILE, found[2], False)


def _rendered(store: Store, request: TaskRequest, body: TaskBody, ref: Ref) -> str:
    """The TASK's text, anchored when the store's reader holds the Lead's anchor (``contract.anchor``)."""
    text = render_checked(_task_of(store, request, body, ref))
    anchor = store.queries.anchor
    return anchored(text, anchor.key, str(ref)) if anchor is not None else text


def _task_of(store: Store, request: TaskRequest, body: TaskBody, ref: Ref) -> Task:
    report_path = store.roots.shown(store.roots.task_dir(ref) / REPORT_FILE)
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

"""A dispatch: a Lead's request checked, then answered by the identical task made before or published anew."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from handoff_core.contract.anchor import anchored
from handoff_core.contract.change import ChangeFacts
from handoff_core.contract.ids import Ref, check_change, check_round, check_topic, next_task
from handoff_core.contract.report import COMMIT_RE, header_fields
from handoff_core.contract.scope import Scope
from handoff_core.contract.task import Task, TaskBody, check_body, task_of
from handoff_core.contract.task_file import render_checked
from handoff_core.contract.validate import closes_claim, task_problems
from handoff_core.errors import ChangeNotActive, HandoffError, InvalidContent, StateRefused, TaskNotFound
from handoff_core.files.allocation import find_retry, newest_round, open_round, recent_rounds, undo
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
    REVIEWING_KINDS,
    TASK_FILE,
    UNFINISHED_STATUSES,
)
from handoff_core.services.rules.ownership import check_dispatch
from handoff_core.services.tree.status import task_kind_and_scope
from handoff_core.services.writing.workspaces import no_base_warning

if TYPE_CHECKING:
    from datetime import datetime

    from handoff_core.files.task_dir import Roots
    from handoff_core.services.tree.queries import Queries

logger = logging.getLogger(__name__)

__all__ = ["DispatchStore", "TaskRequest", "bounded", "checked_body", "create_in", "require_active"]


class DispatchStore(Protocol):
    """What a dispatch needs of the store that publishes it (``store.Store``): named here, so that this
    module never imports the store that imports it."""

    roots: Roots
    queries: Queries
    clock: Callable[[], datetime]
    writer_cap: int


@dataclass(kw_only=True, frozen=True)
class TaskRequest:
    """What a Lead asks for; ids are allocated by the store."""

    change: str
    topic: str
    body: TaskBody
    session: str | None = None  # None: the round of retry_of/review_of, else the change's open round
    new_round: bool = False  # True: open a new round (a new, independent orchestration or run)
    force_new: bool = False  # True: never answer with an identical task created just before
    token_check: Callable[[Ref], str] | None = None  # the hash of the task's report token, once its ref is known
    writer_limit: int | None = None  # the plan's declared limit of parallel writers; none declared: one
    retry_of: Ref | None = None  # the earlier task this one fixes or retries
    review_of: Ref | None = None  # the reported task this review or test-observation reads, at its checkpoint
    signing_key: Callable[[Ref], str] | None = None  # the public key its report token seeds (contract.proof)


def bounded(data: bytes, name: str) -> bytes:
    """Refuse, before publishing, a file that every reader would refuse as too large."""
    if len(data) > MAX_FILE_BYTES:
        raise InvalidContent(
            f"{name} would be {len(data)} bytes, over the {MAX_FILE_BYTES}-byte limit for handoff files; "
            "shorten it and reference large material by path"
        )
    return data


def _ticket(store: DispatchStore, ref: Ref) -> str | None:
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


def checked_body(store: DispatchStore, request: TaskRequest) -> TaskBody:
    """The request's ids and text checked, citing what it retries: all of it before anything is made."""
    check_change(request.change)
    if request.session is not None:
        check_round(request.session)
    check_topic(request.topic)
    _check_round_choice(request)
    body = request.body if request.review_of is None else _reviewing(store, request.review_of, request.body)
    body = check_body(body)  # the one check of the Lead's text, before anything is made
    if request.retry_of is not None:
        body = _citing(store, request.retry_of, body)
    return body


def _check_round_choice(request: TaskRequest) -> None:
    """A retry and a review stay in their task's round [seed 000 session-files: 同一编排计划的实施、审查与
    修复沿用原轮次]; a round is given, or a new one asked for, not both."""
    linked = [ref for ref in (request.retry_of, request.review_of) if ref is not None]
    if request.new_round and (request.session or linked):
        raise InvalidContent("new_round opens a round: give neither session nor retry_of/review_of with it")
    for ref in linked:
        if ref.change != request.change or (request.session and request.session != ref.session):
            raise InvalidContent(
                f"{ref} is in round {ref.change}/{ref.session}: a retry or review stays in its task's round; "
                "dispatch it in that change and omit session"
            )


def round_for(sessions_fd: int, request: TaskRequest) -> str | None:
    """The round a dispatch goes to; None opens a new one. Without session or new_round: the round of
    the task it retries or reviews, else the change's open round (its newest): restoring the Lead or
    changing tool sessions opens none [seed 000 session-files: 恢复 Lead 或更换工具会话不自动新建轮次]."""
    if request.session is not None or request.new_round:
        return request.session
    for ref in (request.retry_of, request.review_of):
        if ref is not None:
            return ref.session
    return newest_round(sessions_fd)


def create_in(store: DispatchStore, sessions_fd: int, request: TaskRequest, body: TaskBody) -> StoredFile:
    """The TASK of ``request`` in its round: an identical one created just before, or a new one published."""
    if not request.force_new and (earlier := _find_retry(store, sessions_fd, request, body)) is not None:
        return earlier
    check_dispatch(body.kind, body.scope, store.queries.claims, request.writer_limit, store.writer_cap)
    session, round_fd, new_round = open_round(sessions_fd, round_for(sessions_fd, request), store.clock())
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
        warnings += tuple(filter(None, [no_base_warning(store.roots.project_root, body.kind, body.scope)]))
        if (anchor := store.queries.anchor) is not None:
            anchor.govern()  # the state root is the Lead's before its first anchored TASK is (``governance``)
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


def _citing(store: DispatchStore, earlier: Ref, body: TaskBody) -> TaskBody:
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
    return body._replace(inputs=f"{body.inputs}\n{cite}", scope=body.scope._replace(retry_of=str(earlier)))


def _reviewing(store: DispatchStore, earlier: Ref, body: TaskBody) -> TaskBody:
    """A review pinned to the reported checkpoint of ``earlier``, citing its REPORT; refused while it
    may still be writing [seed 001 execution-policy: 测试、审查不读正在漂移的候选]."""
    if body.kind not in REVIEWING_KINDS:
        raise InvalidContent(f"review_of is for a {' or '.join(REVIEWING_KINDS)} task, not {body.kind}")
    snapshot = store.queries.snapshot(earlier)
    if not snapshot.task_found or snapshot.file(TASK_FILE).kind == "missing":
        raise TaskNotFound(f"review_of {earlier}: no such task; give the ref of the task to review")
    report = snapshot.file(REPORT_FILE)
    if not closes_claim(report, REPORT_FILE, earlier.session, earlier.task):
        raise StateRefused(
            f"{earlier} has no REPORT yet: its candidate may still be drifting. Wait for its REPORT "
            "(wait_for_reports), then dispatch the review"
        )
    data = report.data or b""
    checkpoint = header_fields(data.decode("utf-8", "replace"))[0].get("Source-Checkpoint", "")
    if not COMMIT_RE.match(checkpoint):
        raise StateRefused(
            f"the REPORT of {earlier} names no Source-Checkpoint commit: there is no fixed candidate to review; "
            "ask for a checkpoint (a retry that commits), or review without review_of naming the files"
        )
    theirs = task_kind_and_scope(snapshot.file(TASK_FILE).data)[1] or Scope()
    scope = body.scope
    if not scope.worktree and theirs.worktree:  # the fixed candidate's own workspace, no new worktree
        scope = scope._replace(worktree=theirs.worktree, branch=theirs.branch)
    where = store.roots.shown(store.roots.task_dir(earlier) / REPORT_FILE)
    cite = (
        f"- Review of `{earlier}` at commit `{checkpoint}`: read its REPORT first, `{where}` (sha256 {sha256(data)})."
    )
    scope = scope._replace(base=checkpoint, review_of=str(earlier))
    return body._replace(inputs=f"{body.inputs}\n{cite}", scope=scope)


def _attempt_warnings(store: DispatchStore, request: TaskRequest, body: TaskBody) -> tuple[str, ...]:
    """After three blocked or failed attempts on one topic or ticket, the Lead is told before a fourth."""
    ended = [t for t in store.queries.status(request.change) if t.report_status in UNFINISHED_STATUSES]
    by_topic = [t for t in ended if t.ref.task.split("-", 1)[-1] == request.topic]
    by_ticket = [t for t in ended if body.ticket is not None and _ticket(store, t.ref) == body.ticket]
    count = max(len(by_topic), len(by_ticket))
    if count < ATTEMPTS_BEFORE_WARNING:
        return ()
    return (f"{count} earlier attempts on this topic or ticket ended blocked or failed: reconsider the plan",)


def _find_retry(store: DispatchStore, sessions_fd: int, request: TaskRequest, body: TaskBody) -> StoredFile | None:
    """The task an identical earlier request created (a caller that never saw the answer)."""
    target = round_for(sessions_fd, request)
    rounds = [target] if target else recent_rounds(sessions_fd, store.clock())

    def expected(session: str, task: str) -> bytes:
        return _rendered(store, request, body, Ref(request.change, session, task)).encode()

    if (found := find_retry(sessions_fd, rounds, request.topic, expected)) is None:
        return None
    return store.roots.stored(Ref(request.change, found[0], found[1]), TASK_FILE, found[2], False)


def _rendered(store: DispatchStore, request: TaskRequest, body: TaskBody, ref: Ref) -> str:
    """The TASK's text, anchored when the store's reader holds the Lead's anchor (``contract.anchor``)."""
    text = render_checked(_task_of(store, request, body, ref))
    anchor = store.queries.anchor
    return anchored(text, anchor.key, str(ref)) if anchor is not None else text


def _task_of(store: DispatchStore, request: TaskRequest, body: TaskBody, ref: Ref) -> Task:
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

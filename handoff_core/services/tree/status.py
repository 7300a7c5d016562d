"""Derived state of every task, from the handoff files alone (no index, no heartbeat)."""

from __future__ import annotations

import sys
from functools import lru_cache
from typing import NamedTuple, cast

from handoff_core.contract.anchor import CHANGED_HOLD, TASK_CHANGED, TaskAnchor
from handoff_core.contract.frontmatter import plain_frontmatter, split_frontmatter
from handoff_core.contract.ids import Ref, is_change_id, is_round_id, task_number
from handoff_core.contract.proof import PROOF_INVALID, Proof
from handoff_core.contract.report import header_fields, header_status
from handoff_core.contract.scope import Scope, read_scope
from handoff_core.contract.snapshot import Entry, TaskSnapshot
from handoff_core.contract.task_file import original_contract
from handoff_core.contract.validate import LATE_REPORT, check_handoff, closes_claim, identity_problems, meta_problems
from handoff_core.errors import HandoffError
from handoff_core.files.sightings import Sighting
from handoff_core.layout import (
    CLOSING_FILES,
    KINDS,
    LOCATOR_FILE,
    RELEASE_FILE,
    REPORT_FILE,
    REPORT_STATUSES,
    TASK_FILE,
    Kind,
    TaskState,
    is_temp,
)

__all__ = [
    "TaskStatus",
    "glance",
    "glance_sighted",
    "named_since",
    "state_label",
    "task_kind_and_scope",
    "task_status",
    "with_writers_since",
    "written_kind",
]

_INACTIVE = "dispatch requires an active change"
ORIGINAL_CONTRACT = (
    "a TASK of the original contract (no schema_version, no handoff-scope): collected under that contract, "
    "never in a new dispatch's scan; retry it as a new task"
)


class TaskStatus(NamedTuple):
    """One task's derived state. A tuple, not a frozen dataclass: a cold answer makes one per task,
    and a frozen dataclass sets each of its fields through ``object.__setattr__`` (3.1 µs a status
    against 0.7 µs: 26 ms of a first answer at 10,000 tasks). As immutable, and no larger (no
    ``__dict__``); changed with ``_replace``."""

    ref: Ref
    kind: Kind | None
    state: TaskState
    report_status: str | None  # the REPORT's Status line when state is "returned"
    scope: Scope | None
    has_locator: bool
    temp_files: tuple[str, ...]
    problems: tuple[str, ...]
    outstanding: bool  # TASK present, no REPORT, no RELEASE
    notes: tuple[str, ...] = ()  # flags that are not validation problems (e.g. a REPORT after a RELEASE)
    # The REPORT's signature (contract.proof): None without a REPORT. Not a problem that hides the
    # report's state: an unproven REPORT still ends the claim, shown for what it is.
    proof: Proof | None = None
    dispatched_at: float = 0.0  # TASK.md's mtime
    released_at: float | None = None  # RELEASE.md's mtime
    closed_at: float | None = None  # the mtime of the REPORT (or RELEASE) that closed it
    held_because: str = ""  # a change that cannot be read, or a TASK changed since dispatch: why it holds everything
    # False for a glance (``glance``): counted by its files' presence and headers, not yet validated.
    judged: bool = True
    # A TASK of the seed's original contract (``task_file.original_contract``): shown as such, no claim.
    original: bool = False

    def age(self, now: float) -> float:
        """Seconds since the TASK was dispatched (0 when there is no TASK file)."""
        return round(max(0.0, now - self.dispatched_at), 1) if self.dispatched_at else 0.0

    def closed_age(self, now: float) -> float | None:
        """Seconds since the REPORT (or RELEASE) closed it; None while it is open."""
        return None if self.closed_at is None else round(max(0.0, now - self.closed_at), 1)

    @property
    def claims_writer(self) -> bool:
        """An outstanding implementation task holds its workspace and writable globs (no TTL);
        one whose TASK cannot be read, or changed since dispatch (of any kind), holds the whole workspace."""
        writer = self.kind == "implementation" or self.kind is None or bool(self.held_because)
        return self.outstanding and not self.original and writer

    @property
    def claim(self) -> str:
        """The claim as shown: ``current: src/a1/**``, a read-only task's artifacts and resources, or why it
        is the whole workspace."""
        if not self.claims_writer:
            held = (*self.scope.artifacts, *self.scope.resources) if self.outstanding and self.scope else ()
            return f"read-only: {', '.join(held)}" if held and not self.original else ""
        if self.held_because:
            return f"whole workspace ({self.held_because})"
        if self.scope is None or self.scope.workspace is None:
            return "whole workspace (TASK.md unreadable: fix it or release_writer)"
        return f"{self.scope.workspace}: {', '.join(self.scope.writable)}"

    @property
    def label(self) -> str:
        """The state as shown (``state_label``)."""
        return state_label(self.state, self.report_status, self.original)

    @property
    def links(self) -> str:
        """The task this one retries or reviews, as shown (``retry of REF``, ``review of REF at SHA``)."""
        scope = self.scope
        if scope is None:
            return ""
        if scope.review_of:
            return f"review of {scope.review_of} at {scope.base[:12]}"
        return f"retry of {scope.retry_of}" if scope.retry_of else ""

    @property
    def containment(self) -> str:
        """How the executor's launch is contained, when the Lead opted out of the default: shown on the task."""
        scope = self.scope
        if scope is None or scope.sandbox == "required":
            return ""
        return f"sandbox: {scope.sandbox}"  # off, or if-available: unsandboxed where the kernel offers none


def state_label(state: TaskState, report_status: str | None, original: bool) -> str:
    """A state as shown: ``returned:<status>`` for a returned task; an original-contract task says so."""
    shown = f"returned:{report_status or '?'}" if state == "returned" else state
    return f"original-contract:{shown}" if original else shown


def _state(snapshot: TaskSnapshot, problems: tuple[str, ...]) -> tuple[TaskState, str | None]:
    if snapshot.file(TASK_FILE).kind == "missing":
        return "incomplete", None
    if problems:
        return "invalid", None
    report = snapshot.file(REPORT_FILE)
    if report.kind == "file" and report.data is not None:
        fields, _ = header_fields(report.data.decode("utf-8", "replace"))
        return "returned", fields.get("Status")
    return ("released" if snapshot.file(RELEASE_FILE).kind == "file" else "dispatched"), None


def _late(snapshot: TaskSnapshot) -> bool:
    return all(snapshot.file(name).kind == "file" for name in CLOSING_FILES)


def _mtime(entry: Entry) -> float | None:
    return entry.mtime if entry.kind == "file" else None


def task_kind_and_scope(data: bytes | None) -> tuple[Kind | None, Scope | None]:
    """Just what ownership needs from a TASK: its kind and its handoff-scope block."""
    try:
        text = (data or b"").decode("utf-8").removeprefix("\ufeff")
        # The plain reader first: a server's first claim scan reads every TASK of the active history.
        kind = (plain_frontmatter(text) or split_frontmatter(text)[0]).get("kind")
    except (HandoffError, UnicodeDecodeError):
        return None, None
    return (cast(Kind, kind) if kind in KINDS else None), read_scope(text)


def task_status(ref: Ref, snapshot: TaskSnapshot, anchor: TaskAnchor | None = None) -> TaskStatus:
    """With the Lead's ``anchor``, a TASK changed since dispatch is one of the task's problems."""
    task_entry = snapshot.file(TASK_FILE)
    stage = "return" if snapshot.file(REPORT_FILE).kind != "missing" else "dispatch"
    validation = check_handoff(lambda: snapshot, stage, ref.change, ref.session, ref.task, anchor)
    # A change that is no longer active still has readable tasks; only its dispatch is over.
    problems = tuple(p for p in validation.errors if p not in (_INACTIVE, PROOF_INVALID))
    kind, scope = task_kind_and_scope(task_entry.data)
    changed = anchor is not None and TASK_CHANGED in validation.errors  # not the TASK published: its scope is unknown
    original = kind is None and not changed and original_contract(task_entry.data)
    if original:  # collected under its own contract: the new contract's validation is no problem of it
        problems = ()
    if kind == "implementation" and scope is None:
        problems += ("the handoff-scope block cannot be read: the task holds the whole workspace",)
    release = snapshot.file(RELEASE_FILE)
    if release.kind != "missing" and not closes_claim(release, RELEASE_FILE, ref.session, ref.task):
        problems += ("RELEASE.md is not this task's release evidence: the writer claim stands",)
    state, report_status = _state(snapshot, problems)
    closing = next((snapshot.file(n) for n in CLOSING_FILES if snapshot.file(n).kind == "file"), None)
    return TaskStatus(
        ref=ref,
        kind=kind,
        state=state,
        report_status=report_status,
        scope=scope,
        has_locator=snapshot.file(LOCATOR_FILE).kind != "missing",
        temp_files=tuple(name for name in snapshot.task_entries if is_temp(name)),
        problems=problems,
        closed_at=closing.mtime if closing is not None else None,
        notes=((LATE_REPORT,) if _late(snapshot) else ()) + ((ORIGINAL_CONTRACT,) if original else ()),
        proof=validation.proof,
        dispatched_at=task_entry.mtime if task_entry.kind == "file" else 0.0,
        released_at=_mtime(snapshot.file(RELEASE_FILE)),
        outstanding=task_entry.kind != "missing"
        and not any(closes_claim(snapshot.file(n), n, ref.session, ref.task) for n in CLOSING_FILES),
        original=original,
        held_because=CHANGED_HOLD if changed else "",
    )


def _glance_kind(ref: Ref, data: bytes | None) -> Kind | None:
    """The TASK's kind when its frontmatter reads cleanly and names this task; else None."""
    try:
        text = (data or b"").decode("utf-8").removeprefix("\ufeff")
        meta = plain_frontmatter(text) or split_frontmatter(text)[0]
    except (HandoffError, UnicodeDecodeError):
        return None
    kind = meta.get("kind")
    if meta_problems(meta, ref.change, ref.session, ref.task) or kind not in KINDS:
        return None
    return cast(Kind, sys.intern(kind))  # one string per kind: a cold answer holds a glance per task


def _readable(snapshot: TaskSnapshot) -> bool:
    """Every handoff file present is a singly linked regular file within the size limit."""
    return all(e.kind == "file" and e.data is not None and e.nlink == 1 for e in snapshot.files.values())


def glance(ref: Ref, snapshot: TaskSnapshot) -> TaskStatus | None:
    """A task's state from the cheapest read that decides it, or None when that read cannot.

    What a glance reads: which files exist, the TASK's frontmatter (its kind and ids), the REPORT's
    ``Status:`` header. Its counts, claim and times are a full judgement's; only the validation of
    the sections, the scope, the locator and the REPORT's body is left for later (``judged`` is
    False), so a glanced task may yet turn out ``invalid``. Anything out of the ordinary (bad ids, a
    shared number, an unreadable or odd file, an implementation task with a REPORT or RELEASE, whose
    claim rests on that file's validity) is no glance: the caller judges it in full at once.
    """
    task = snapshot.file(TASK_FILE)
    if identity_problems(ref.change, ref.session, ref.task) or snapshot.problems or snapshot.same_number != 1:
        return None
    if task.kind != "file" or not _readable(snapshot) or (kind := _glance_kind(ref, task.data)) is None:
        return None
    report, release = snapshot.file(REPORT_FILE), snapshot.file(RELEASE_FILE)
    seen = Sighting(
        names=list(snapshot.task_entries),
        task=task.data or b"",
        task_mtime=task.mtime,
        report=report.data if report.kind == "file" else None,
        report_mtime=_mtime(report),
        release_mtime=_mtime(release),
        has_locator=snapshot.file(LOCATOR_FILE).kind != "missing",
    )
    return _glanced(ref, kind, seen)


@lru_cache(maxsize=1024)
def _plain_round(change: str, session: str) -> bool:
    """Whether a change and round id are valid (checked once per round, not per task)."""
    return is_change_id(change) and is_round_id(session)


def glance_sighted(change: str, session: str, task: str, seen: Sighting) -> TaskStatus | None:
    """``glance`` of a task from its sighting (``files.sightings``): the same status, or None."""
    if not _plain_round(change, session) or task_number(task) is None:
        return None
    ref = Ref(change, session, task)
    kind = written_kind(change, session, task, seen.task) or _glance_kind(ref, seen.task)
    return None if kind is None else _glanced(ref, kind, seen)


_KIND_LINES = {f'kind: "{kind}"\n'.encode(): kind for kind in KINDS}


@lru_cache(maxsize=1024)
def _written_lines(change: str, session: str) -> tuple[bytes, bytes]:
    """The frontmatter's first lines up to the task's name, and its change line, as the server writes them."""
    return f'---\nschema_version: 1\nsession: "{session}"\ntask: "'.encode(), f'change: "{change}"\n'.encode()


def written_kind(change: str, session: str, task: str, data: bytes) -> Kind | None:
    """``_glance_kind`` of a TASK of valid ids whose frontmatter is, byte for byte, as the server
    writes it for this task without a ticket; None: ask ``_glance_kind``. A cold status reads
    thousands of these: a few byte comparisons and one decode each, no regex and no mapping."""
    head, change_line = _written_lines(change, session)
    named = f'{task}"\n'.encode()
    if not (data.startswith(head) and data.startswith(named, len(head))):
        return None
    start = len(head) + len(named)
    end = data.find(b"\n", start) + 1
    kind = _KIND_LINES.get(data[start:end])
    if data.startswith(change_line, end):
        end += len(change_line)
    if kind is None or not data.startswith(b"---\n", end):
        return None
    if not data.isascii():  # ASCII is UTF-8: decoded only when it is not (no copy of each TASK)
        try:
            data.decode("utf-8")  # a TASK that is not UTF-8 has no kind a glance can read
        except UnicodeDecodeError:
            return None
    return kind


def _glanced(ref: Ref, kind: Kind, seen: Sighting) -> TaskStatus | None:
    closing = seen.report_mtime if seen.report is not None else seen.release_mtime
    if closing is not None and kind == "implementation":
        return None
    state: TaskState = "dispatched" if closing is None else "returned" if seen.report is not None else "released"
    report_status = None
    if seen.report is not None:
        report_status = header_status(seen.report)
        if report_status not in REPORT_STATUSES:
            return None
        report_status = sys.intern(report_status)
    handoff = (seen.report is not None) + (seen.release_mtime is not None) + seen.has_locator + 1
    return TaskStatus(
        ref=ref,
        kind=kind,
        state=state,
        report_status=report_status,
        scope=None,
        has_locator=seen.has_locator,
        # Names beyond the handoff files are rare: sorted and sifted only then.
        temp_files=() if len(seen.names) == handoff else tuple(n for n in sorted(seen.names) if is_temp(n)),
        problems=(),
        # Closed and not an implementation task: it holds no claim either way; whether its REPORT
        # ends it (and so whether it needs the Lead) is decided when it is judged, before any page shows it.
        outstanding=closing is None,
        closed_at=closing,
        notes=(LATE_REPORT,) if seen.report is not None and seen.release_mtime is not None else (),
        dispatched_at=seen.task_mtime,
        released_at=seen.release_mtime,
        judged=False,
    )


def with_writers_since(tasks: list[TaskStatus]) -> list[TaskStatus]:
    """A late REPORT's note names the writers dispatched at or after its RELEASE: they may have overlapped."""
    return [named_since(status, tasks) for status in tasks]


def named_since(status: TaskStatus, tasks: list[TaskStatus]) -> TaskStatus:
    released = status.released_at
    if LATE_REPORT not in status.notes or released is None:  # another note (an original contract) is no late REPORT
        return status
    # File times come from a coarse clock: a writer dispatched in the release's own tick may have
    # overlapped too, so it is named (>=), never left out.
    since = [
        str(t.ref) for t in tasks if t.kind == "implementation" and t.ref != status.ref and t.dispatched_at >= released
    ]
    late = f"{LATE_REPORT}; writers dispatched since: {', '.join(since) or 'none'}"
    return status._replace(notes=(late, *(note for note in status.notes if note != LATE_REPORT)))

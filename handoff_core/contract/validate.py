"""Validation of one handoff, both stages of SPEC §7: the seed validator's checks plus extensions.

The seed stops at its first failure; this collects every problem, so its verdict (errors or
not) agrees with the seed on every tree the seed knows, and says more where it can.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from handoff_core.contract.digest import sha256_hex
from handoff_core.contract.frontmatter import split_frontmatter
from handoff_core.contract.ids import is_change_id, is_round_id, task_number
from handoff_core.contract.markdown import section_problems, sections
from handoff_core.contract.proof import PROOF_INVALID, proof_of
from handoff_core.contract.record import NamedTuple
from handoff_core.contract.report import focused_problem, header_fields
from handoff_core.contract.snapshot import Entry, TaskSnapshot
from handoff_core.contract.task import META_KEYS
from handoff_core.contract.values import is_real
from handoff_core.errors import HandoffError
from handoff_core.layout import (
    KINDS,
    LOCATOR_FILE,
    MAX_FILE_BYTES,
    RELEASE_FILE,
    REPORT_FILE,
    REPORT_FOCUSED,
    REPORT_SECTIONS,
    REPORT_STATUSES,
    STAGES,
    TASK_FILE,
    TASK_SECTIONS,
    is_temp,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: handoff-validate never loads it
if TYPE_CHECKING:  # the anchor, the locator and the release are loaded where a check meets them:
    # handoff-validate's process pays for no module its task does not need
    from typing import Any

    from handoff_core.contract.anchor import TaskAnchor
    from handoff_core.contract.proof import Proof


__all__ = [
    "CAVEAT",
    "LATE_REPORT",
    "ValidationResult",
    "check_handoff",
    "closes_claim",
    "identity_problems",
    "meta_problems",
    "report_problems",
    "task_problems",
]

LATE_REPORT = "REPORT.md came after RELEASE.md: the writer had not stopped when it was released"
CAVEAT = (
    "Read-only structure checks do not authenticate tool identity, transcript content, authorization or "
    "completion; external histories are never opened."
)


class ValidationResult(NamedTuple):
    errors: tuple[str, ...]
    warnings: tuple[str, ...]
    caveat: str = CAVEAT
    proof: Proof | None = None  # the REPORT's signature at the return stage (contract.proof); None: no REPORT read

    @property
    def ok(self) -> bool:
        return not self.errors


def identity_problems(change: str, session: str, task: str) -> list[str]:
    problems = [] if is_round_id(session) else ["invalid orchestration session"]
    problems += [] if task_number(task) is not None else ["invalid task sequence/topic"]
    return problems + ([] if is_change_id(change) else [f"invalid change id {change!r}"])


def _text(entry: Entry, name: str, errors: list[str]) -> str | None:
    if entry.kind == "missing":
        errors.append(f"{name} not found")
    elif entry.kind != "file":
        errors.append(f"{name} is not a regular file (found {entry.kind})")
    elif entry.oversize:
        errors.append(f"{name} is larger than the {MAX_FILE_BYTES}-byte limit for handoff files")
    elif entry.nlink != 1:
        errors.append(f"{name} has {entry.nlink} hard links; a handoff file must have exactly one")
    else:
        try:
            return (entry.data or b"").decode("utf-8").removeprefix("\ufeff")
        except UnicodeDecodeError:
            errors.append(f"{name} is not valid UTF-8")
    return None


_KNOWN_KEYS = frozenset(META_KEYS)  # a cold status checks thousands of frontmatters: one set test each


def meta_problems(meta: Mapping[str, Any], change: str, session: str, task: str) -> list[str]:
    version = meta.get("schema_version")
    if isinstance(version, bool) or not isinstance(version, int | float) or version != 1:
        return ["TASK requires schema_version 1; retain legacy handoffs under their original contract"]
    checks: list[tuple[bool, str]] = [
        (_KNOWN_KEYS.issuperset(meta), "TASK: unknown metadata field"),
        (meta.get("session") == session and meta.get("task") == task, "TASK identity mismatch"),
        (meta.get("kind") in KINDS, "TASK: invalid kind"),
        ("change" not in meta or meta["change"] == change, "TASK change mismatch"),
        ("ticket" not in meta or is_real(meta["ticket"]), "TASK: invalid ticket"),
    ]
    return [message for passed, message in checks if not passed]


def task_problems(text: str, change: str, session: str, task: str) -> list[str]:
    try:
        meta, body = split_frontmatter(text)
    except HandoffError as exc:
        return [exc.message]
    return meta_problems(meta, change, session, task) + section_problems(body, TASK_SECTIONS)


def report_problems(text: str, session: str, task: str, task_sha: str | None) -> tuple[list[str], list[str]]:
    errors = report_errors(text, session, task, task_sha)
    warnings: list[str] = []
    if not errors and (problem := focused_problem(sections(text).get(REPORT_FOCUSED, ""))) is not None:
        warnings.append(problem)
    return errors, warnings


def report_errors(text: str, session: str, task: str, task_sha: str | None) -> list[str]:
    """A REPORT's errors alone: what a claim scan asks of every REPORT in the active history."""
    fields, duplicates = header_fields(text)
    errors = [f"REPORT: duplicate {key}" for key in dict.fromkeys(duplicates) if key in ("Session", "Task", "Status")]
    if fields.get("Session") != session or fields.get("Task") != task:
        errors.append("REPORT identity mismatch")
    if fields.get("Status") not in REPORT_STATUSES:
        errors.append("REPORT: invalid terminal status")
    errors += section_problems(text, REPORT_SECTIONS)
    pinned = fields.get("Task-SHA256")
    if pinned is not None and task_sha is not None and pinned != task_sha:
        errors.append("REPORT Task-SHA256 differs from the current TASK.md: the TASK changed after delivery")
    return errors


def closes_claim(entry: Entry, name: str, session: str, task: str) -> bool:
    """Whether a REPORT.md or RELEASE.md entry ends the task's writer claim.

    Only a regular, singly linked file that reads as this task's report (or release) does: an
    empty file, a directory, a FIFO or a dangling link under that name is no evidence of anything.
    """
    text = _text(entry, name, [])
    if text is None:
        return False
    if name == RELEASE_FILE:
        from handoff_core.contract.release import release_problems

        return not release_problems(text, session, task)
    return not report_errors(text, session, task, None)


def _anchor_problem(anchor: TaskAnchor, ref: str, task: bytes) -> str | None:
    from handoff_core.contract.anchor import state_problem

    return state_problem(anchor.state(ref, task))


def _lead_proof(anchor: TaskAnchor, ref: str, task: bytes, report: bytes) -> Proof:
    from handoff_core.contract.anchor import lead_proof

    return lead_proof(anchor, ref, task, report)


def _occupancy(snapshot: TaskSnapshot) -> list[str]:
    return [] if snapshot.same_number == 1 else ["task sequence is missing or occupied more than once"]


def check_handoff(
    snapshot_of: Callable[[], TaskSnapshot],
    stage: str,
    change: str,
    session: str,
    task: str,
    anchor: TaskAnchor | None = None,
) -> ValidationResult:
    """Judge one task's files for ``stage``; ``snapshot_of`` reads them only once the ids are sane.

    With the Lead's ``anchor`` the TASK must be the one published, and the REPORT's proof is checked
    against the key the Lead derives (``contract.anchor``); without it, by the files alone."""
    if stage not in STAGES:
        return ValidationResult(("expected dispatch or return stage",), ())
    errors = identity_problems(change, session, task)
    if errors:
        return ValidationResult(tuple(errors), ())
    snapshot = snapshot_of()
    facts = snapshot.change
    if facts is not None and facts.location != "active":
        return ValidationResult(("archived handoffs are frozen; use the original archive integrity checks",), ())
    if stage == "dispatch" and facts is not None and facts.outcome != "active":
        errors.append("dispatch requires an active change")
    if snapshot.problems:
        return ValidationResult((*errors, *snapshot.problems), ())
    errors += _occupancy(snapshot)
    if not snapshot.task_found:
        return ValidationResult((*errors, f"task directory {task} not found in round {session}"), ())
    return _check_files(snapshot, stage, errors, (change, session, task), anchor)


def _check_files(
    snapshot: TaskSnapshot, stage: str, errors: list[str], ids: tuple[str, str, str], anchor: TaskAnchor | None
) -> ValidationResult:
    change, session, task = ids
    ref = "/".join(ids)
    warnings = [
        f"leftover temp file {name} (never a handoff file; remove it)"
        for name in snapshot.task_entries
        if is_temp(name)
    ]
    task_entry = snapshot.file(TASK_FILE)
    task_text = _text(task_entry, TASK_FILE, errors)
    task_sha = sha256_hex(task_entry.data) if task_text is not None and task_entry.data else None
    if task_text is not None:
        errors += task_problems(task_text, change, session, task)
        if anchor is not None and (problem := _anchor_problem(anchor, ref, task_entry.data or b"")):
            errors.append(problem)
    report = snapshot.file(REPORT_FILE)
    proof: Proof | None = None
    if stage == "dispatch":
        if report.kind != "missing":
            errors.append("already delivered; create a new task instead of redispatch")
    elif (report_text := _text(report, REPORT_FILE, errors)) is not None:
        more_errors, more_warnings = report_problems(report_text, session, task, task_sha)
        errors += more_errors
        warnings += more_warnings
        task_data, report_data = task_entry.data or b"", report.data or b""
        proof = _lead_proof(anchor, ref, task_data, report_data) if anchor else proof_of(task_data, report_data)
        errors += [PROOF_INVALID] if proof == "invalid" else []
    if report.kind == "file" and snapshot.file(RELEASE_FILE).kind == "file":
        warnings.append(f"{LATE_REPORT}; check the writers dispatched since")
    locator = snapshot.file(LOCATOR_FILE)
    if locator.kind != "missing":
        if locator.oversize:
            errors.append(f"{LOCATOR_FILE} is larger than the {MAX_FILE_BYTES}-byte limit for handoff files")
        elif locator.kind != "file" or locator.data is None:
            errors.append(f"{LOCATOR_FILE} is not a regular file (found {locator.kind})")
        else:
            from handoff_core.contract.locator import parse_locator

            errors += parse_locator(locator.data)[1]
    return ValidationResult(tuple(errors), tuple(warnings), proof=proof)

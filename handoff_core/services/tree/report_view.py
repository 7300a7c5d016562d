"""Reading a REPORT back for the receiver: focused handoff first, as untrusted data with provenance."""

from __future__ import annotations

import logging
import os
import unicodedata
from dataclasses import dataclass

from handoff_core.contract.anchor import TASK_CHANGED, lead_proof, state_problem
from handoff_core.contract.ids import Ref
from handoff_core.contract.locator import parse_locator
from handoff_core.contract.markdown import sections
from handoff_core.contract.proof import Proof, proof_of
from handoff_core.contract.report import header_fields
from handoff_core.contract.validate import LATE_REPORT
from handoff_core.errors import HandoffError, NotFound, TaskNotFound
from handoff_core.files.task_dir import sha256
from handoff_core.layout import LOCATOR_FILE, RELEASE_FILE, REPORT_FILE, REPORT_FOCUSED, REPORT_SECTIONS, TASK_FILE
from handoff_core.services.tree.queries import Queries

logger = logging.getLogger(__name__)

__all__ = ["MAX_TEXT", "HandoffView", "Provenance", "log_path", "read_handoff", "suspicious"]

MAX_TEXT = 8000
MAX_FLAGS = 20
_ALLOWED_CONTROLS = {"\n", "\t"}


@dataclass(frozen=True)
class Provenance:
    file: str
    path: str
    sha256: str
    written_by: str


@dataclass(kw_only=True, frozen=True)
class HandoffView:
    ref: Ref
    header: dict[str, str]
    focused: str
    sections: dict[str, str]
    locator_path: str | None
    task_sha256: str
    pinned_task_matches: bool | None  # None: the REPORT pins no TASK
    proof: Proof  # valid: signed by the key its TASK records; absent: written by hand
    provenance: tuple[Provenance, ...]
    flags: tuple[str, ...]
    truncated: bool


def suspicious(text: str, where: str) -> list[str]:
    """Invisible, bidirectional and control characters, which can hide instructions from a reader."""
    found = []
    for number, line in enumerate(text.split("\n"), start=1):
        for char in line:
            category = unicodedata.category(char)
            if category in ("Cf", "Co", "Cs") or (category == "Cc" and char not in _ALLOWED_CONTROLS):
                found.append(f"{where} line {number}: U+{ord(char):04X} {unicodedata.name(char, category)}")
    return found


def cut(text: str, limit: int = MAX_TEXT) -> tuple[str, bool]:
    if len(text) <= limit:
        return text, False
    return f"{text[:limit]}\n…[cut: {len(text) - limit} more characters; read the file for the rest]", True


def _provenance(queries: Queries, ref: Ref, name: str, data: bytes, written_by: str) -> Provenance:
    return Provenance(name, str(queries.roots.task_dir(ref) / name), sha256(data), written_by)


def read_handoff(queries: Queries, ref: Ref) -> HandoffView:
    """The REPORT of ``ref`` with its context; refuses a task that has no REPORT yet."""
    task_bytes = queries.read_file(ref, TASK_FILE)
    try:
        report_bytes = queries.read_file(ref, REPORT_FILE)
    except NotFound:
        raise TaskNotFound(
            f"{ref} has no {REPORT_FILE} yet; wait_for_reports, or read_task for what was asked"
        ) from None
    text = report_bytes.decode("utf-8", "replace")
    header, _ = header_fields(text)
    found = sections(text)
    writer = "lead (verbatim capture)" if header.get("Captured-by") == "Lead" else "executor"
    provenance = [
        _provenance(queries, ref, TASK_FILE, task_bytes, "lead"),
        _provenance(queries, ref, REPORT_FILE, report_bytes, writer),
    ]
    locator_path = _locator(queries, ref, provenance)
    texts = {name: cut(found.get(name, "")) for name in REPORT_SECTIONS}
    flags = [flag for name, (value, _) in texts.items() for flag in suspicious(value, name)]
    flags += [flag for key, value in header.items() for flag in suspicious(value, f"header {key}")]
    if queries.read_optional(ref, RELEASE_FILE) is not None:
        flags.insert(0, LATE_REPORT)
    anchor = queries.anchor
    changed = anchor is not None and state_problem(anchor.state(str(ref), task_bytes)) is not None
    if changed:
        flags.insert(0, TASK_CHANGED)
    task_sha = sha256(task_bytes)
    pinned = header.get("Task-SHA256")
    return HandoffView(
        ref=ref,
        header=header,
        focused=texts[REPORT_FOCUSED][0],
        sections={name: value for name, (value, _) in texts.items() if name != REPORT_FOCUSED},
        locator_path=locator_path,
        task_sha256=task_sha,
        pinned_task_matches=False if changed else None if pinned is None else pinned == task_sha,
        proof=lead_proof(anchor, str(ref), task_bytes, report_bytes) if anchor else proof_of(task_bytes, report_bytes),
        provenance=tuple(provenance),
        flags=tuple(flags[:MAX_FLAGS]) + ((f"…{len(flags) - MAX_FLAGS} more",) if len(flags) > MAX_FLAGS else ()),
        truncated=any(was_cut for _, was_cut in texts.values()),
    )


def _locator_file(queries: Queries, ref: Ref) -> tuple[bytes, str | None] | None:
    """The locator file's bytes and its path (None when the file is invalid); None when there is none."""
    data = queries.read_optional(ref, LOCATOR_FILE)
    if data is None:
        return None
    value, problems = parse_locator(data)
    return data, (str(value["path"]) if not problems and isinstance(value, dict) else None)


def _locator(queries: Queries, ref: Ref, provenance: list[Provenance]) -> str | None:
    try:
        found = _locator_file(queries, ref)
    except HandoffError as exc:  # the REPORT is still shown; its locator is left out, and validation says why
        logger.warning("session-locator.json of %s not shown: %s", ref, exc.code)
        return None
    if found is None:
        return None
    provenance.append(_provenance(queries, ref, LOCATOR_FILE, found[0], "lead"))
    return found[1]


def log_path(queries: Queries, ref: Ref) -> str:
    """The confirmed session log of ``ref`` (or its ``.zst`` sibling); a missing log is said as such."""
    found = _locator_file(queries, ref)
    if found is None:
        raise NotFound(f"{ref} has no {LOCATOR_FILE}: the Lead records one after confirming the log")
    if found[1] is None:
        raise NotFound(f"{ref} has an invalid {LOCATOR_FILE}; validate_handoff names the problem")
    path = found[1]
    if not os.path.exists(path) and os.path.exists(f"{path}.zst"):
        return f"{path}.zst"
    if not os.path.exists(path):
        raise NotFound(f"the session log {path} is missing on this host; judge from the REPORT and the artifacts")
    return path

"""Returns from an external channel (seed 002): untrusted, judged whole before anything is written.

The dispatch's MANIFEST.json records the policy its return is judged by (``return_limits``: sizes,
entries, the kinds of file it takes back); the archive's structure is checked first
(``files.archives``), then each entry (``contract.return_policy``: no executables, auto-run files
or credential files), then every text in it is scanned for secrets. A refusal names the entry and
the rule and writes nothing: the download stays where the Lead put it, and the attempt id stays
free. An accepted return is persisted under a new attempt: its raw bytes in ``raw/``, the standard
``{dispatch}.return.{attempt}.zip`` with its hash, and an ``ACCEPTANCE.md`` for the Lead's verdict.

What it carries stays inside those ZIPs. No file the return carries is written to the project
tree on receipt: whatever lies in the tree as a file is found by some tool that walks it (pytest
imports every ``test_*.py`` below its root and runs the doctests of every ``test*.txt``, ``node
--test`` every ``*.test.js``, a commit's hooks every staged file), and no name or folder is inert
under every project's configuration. An archive is one file none of them opens. The Lead reads the
entries there and extracts those it takes by naming them in ``accept`` (an entry, or a folder
``name/`` for the entries below it), on a new attempt: they land in that attempt's ``extracted/``,
where the project's tools will find them. An entry those tools would execute
(``return_policy.held_because``: a ``conftest.py``, a ``package.json`` with lifecycle scripts, a
build script) is flagged as held, and only its own name takes it.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from handoff_core.contract.exchange import acceptance_stub, check_exchange_id, delivery_parts, render_return
from handoff_core.contract.return_policy import ReturnPolicy, entry_refusal, held_because, policy_from
from handoff_core.errors import InvalidContent, TooLarge, WriteConflict
from handoff_core.files.archives import (
    LIMITS,
    Entry,
    Limits,
    check_archive,
    deterministic_zip,
    read_checked,
    refusal,
    write_checked,
)
from handoff_core.files.downloads import read_download
from handoff_core.files.paths import read_regular, walked
from handoff_core.files.task_dir import sha256, translated
from handoff_core.layout import KINDS
from handoff_core.services.exchange.outbound import publish_all
from handoff_core.services.secrets.secret_scan import scan_all

__all__ = ["Received", "judge_return", "receive_file", "receive_return", "return_policy"]


@dataclass(frozen=True, kw_only=True)
class Received:
    attempt_id: str
    raw_locator: str
    raw_sha256: str
    return_locator: str
    extracted_files: int  # the entries ``accept`` took, written to the attempt's extracted/
    held: tuple[tuple[str, str], ...] = ()  # (entry, why): would run on the Lead's machine; not extracted
    kept: tuple[str, ...] = ()  # every file left in the sealed ZIP only (the held ones among them)


def _attempt(project: Path, scope_id: str, task_id: str, dispatch_id: str, attempt_id: str) -> tuple[str, ...]:
    root = delivery_parts(scope_id, task_id, dispatch_id)
    attempt = (*root, "inbound", check_exchange_id(attempt_id, "attempt id"))
    if not project.joinpath(*root, "outbound").is_dir():
        raise InvalidContent(f"no outbound package under {'/'.join(root)}: package the dispatch first")
    if project.joinpath(*attempt).exists():
        raise WriteConflict(f"{'/'.join(attempt)} exists already: nothing is overwritten; use a new attempt id")
    return attempt


def return_policy(project: Path, attempt: tuple[str, ...]) -> ReturnPolicy:
    """The policy the attempt's dispatch recorded in its MANIFEST.json."""
    with walked(project, (*attempt[:-2], "outbound", "staging")) as fd:
        data = read_regular(fd, "MANIFEST.json")
    try:
        manifest = json.loads(data)
    except ValueError as exc:
        raise InvalidContent(f"the dispatch's MANIFEST.json is not JSON ({exc}): make a new dispatch") from exc
    kind = manifest.get("task_kind") if isinstance(manifest, dict) else None
    if kind not in KINDS:
        raise InvalidContent(f"the dispatch's MANIFEST.json names no task kind of {list(KINDS)}: make a new dispatch")
    return policy_from(manifest.get("return_limits"), kind)


def _limits(policy: ReturnPolicy) -> Limits:
    """The archive rules under the policy, never past the hard limits whatever a manifest says."""
    return Limits(
        entries=min(policy.entries, LIMITS.entries),
        entry_bytes=min(policy.entry_bytes, LIMITS.entry_bytes),
        total_bytes=min(policy.total_bytes, LIMITS.total_bytes),
        ratio=min(policy.ratio, LIMITS.ratio),
    )


def _refuse_secrets(texts: list[tuple[str, str]]) -> None:
    """Credentials never come back into the project: the first finding refuses the return."""
    findings = scan_all(texts)
    if findings:
        raise refusal(findings[0].field, f"a secret ({findings[0].kind}) on line {findings[0].line}")


def judge_return(raw: bytes, policy: ReturnPolicy) -> list[Entry]:
    """The return's entries when the archive, each entry and every text in it pass; else a refusal."""
    entries = read_checked(raw, check_archive(raw, _limits(policy)))
    texts = []
    for entry in entries:
        if (reason := entry_refusal(entry.parts, entry.mode, entry.body, policy)) is not None:
            raise refusal(entry.name, reason)
        if entry.body is not None and "text" in policy.content:
            try:
                texts.append((entry.name, entry.body.decode("utf-8")))
            except UnicodeDecodeError:
                continue  # an image: entry_refusal let it through, and it holds no lines to scan
    _refuse_secrets(texts)
    return entries


@translated
def receive_file(
    project: Path,
    scope_id: str,
    task_id: str,
    dispatch_id: str,
    attempt_id: str,
    *,
    path: str,
    forbidden: Sequence[Path],
    is_text: bool = False,
    accept: Sequence[str] = (),
) -> Received:
    """``receive_return`` for a file the Lead names: read only when it may be (``read_download``:
    never a kernel view, device, link or one of ``forbidden``), and bounded before it is read."""
    policy = return_policy(project, _attempt(project, scope_id, task_id, dispatch_id, attempt_id))
    raw = read_download(path, forbidden=forbidden, limit=policy.archive_bytes)
    return receive_return(project, scope_id, task_id, dispatch_id, attempt_id, raw, is_text=is_text, accept=accept)


@translated
def receive_return(
    project: Path,
    scope_id: str,
    task_id: str,
    dispatch_id: str,
    attempt_id: str,
    raw: bytes,
    is_text: bool,
    accept: Sequence[str] = (),
) -> Received:
    """Judge the return whole in memory; only an accepted one is written (raw first, then the rest)."""
    attempt = _attempt(project, scope_id, task_id, dispatch_id, attempt_id)
    policy = return_policy(project, attempt)
    limit = policy.total_bytes if is_text else policy.archive_bytes
    if len(raw) > limit:
        raise TooLarge(f"the return is {len(raw)} bytes, over this dispatch's {limit}; nothing was written")
    raw_name = "response.txt.zip" if is_text else "response.zip"  # never the provider's own file name
    raw_locator = "/".join((*attempt, "raw", raw_name))
    entries: list[Entry] = []
    if is_text:
        text = raw.decode("utf-8", "replace")
        _refuse_secrets([("(text answer)", text)])
        kept_raw = deterministic_zip([("response.txt", raw)])  # the bytes as they came, inside a ZIP too
        archive = deterministic_zip([("RETURN.md", render_return(dispatch_id, attempt_id, raw_locator, text).encode())])
    else:
        entries, kept_raw = judge_return(raw, policy), raw
        archive = raw  # an accepted archive is kept as it came
    held = _held(entries)
    taken = _taken(entries, held, accept)
    standard = _persist(project, attempt, (raw_name, kept_raw), taken, archive)
    files = [entry.name for entry in entries if entry.body is not None]
    return Received(
        attempt_id=attempt_id,
        raw_locator=raw_locator,
        raw_sha256=sha256(raw),
        return_locator="/".join((*attempt, standard)),
        extracted_files=len(taken),
        held=tuple((name, why) for name, why in held.items() if name not in accept),
        kept=tuple(name for name in files if name not in {entry.name for entry in taken}),
    )


def _held(entries: list[Entry]) -> dict[str, str]:
    """The entries the Lead's tools would execute, with why."""
    return {e.name: why for e in entries if e.body is not None and (why := held_because(e.parts, e.body))}


def _taken(entries: list[Entry], held: dict[str, str], accept: Sequence[str]) -> list[Entry]:
    """The file entries ``accept`` names: each by its name, or below a folder ``name/`` unless held (a
    held entry is taken only by its own name). A name that takes nothing is refused."""
    files = [entry for entry in entries if entry.body is not None]
    taken: dict[str, Entry] = {}
    for wanted in accept:
        found = [
            entry
            for entry in files
            if entry.name == wanted
            or (wanted.endswith("/") and entry.name.startswith(wanted) and entry.name not in held)
        ]
        if not found:
            raise InvalidContent(
                f"accept names {wanted!r}, which takes no file of this return: name a file it holds, or a "
                "folder as 'name/' (a held file only by its own name)"
            )
        taken |= {entry.name: entry for entry in found}
    return list(taken.values())


def _persist(
    project: Path, attempt: tuple[str, ...], raw: tuple[str, bytes], taken: list[Entry], archive: bytes
) -> str:
    """An accepted return's files, raw first; the standard ZIP's name. A failure removes the attempt."""
    dispatch_id, attempt_id = attempt[-3], attempt[-1]
    standard = f"{dispatch_id}.return.{attempt_id}.zip"
    digest = sha256(archive)
    sealed = [(standard, archive), (f"{standard[:-4]}.sha256", f"{digest}  {standard}\n".encode())]
    acceptance = ("ACCEPTANCE.md", acceptance_stub(dispatch_id, attempt_id, digest).encode())
    try:
        publish_all(project, (*attempt, "raw"), [raw])
        if taken:
            with walked(project, (*attempt, "extracted"), create=True) as fd:
                write_checked(taken, fd)
        publish_all(project, attempt, [*sealed, acceptance])
    except BaseException:
        shutil.rmtree(project.joinpath(*attempt), ignore_errors=True)  # a half-written attempt is no attempt
        raise
    return standard

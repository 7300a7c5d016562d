"""External-web exchange: sealed outbound packages and untrusted return archives (seed 002).

Outbound: the files the Lead names, less the default exclusions, scanned for secrets, staged with
DISPATCH.md and MANIFEST.json, sealed as a deterministic ZIP with its ``.sha256`` and SESSION.md.
Inbound: the raw bytes are persisted under a new attempt's ``raw/`` before anything else, hashed,
and checked whole; only an accepted archive is extracted (into that attempt's ``extracted/``) and
copied to the standard ``{dispatch}.return.{attempt}.zip``. Nothing is ever overwritten: every
file is published write-once, and an existing dispatch or attempt is a refusal.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from handoff_core.contract.exchange import (
    DELIVERY_ROOT,
    Channel,
    Manifest,
    acceptance_stub,
    check_exchange_id,
    delivery_parts,
    excluded_reason,
    render_dispatch,
    render_manifest,
    render_return,
    render_session,
)
from handoff_core.contract.task import Task
from handoff_core.contract.values import relative_parts
from handoff_core.errors import InvalidContent, WriteConflict
from handoff_core.files.archives import check_archive, deterministic_zip, extract_checked
from handoff_core.files.paths import read_regular, walked
from handoff_core.files.publishing import publish
from handoff_core.files.task_dir import sha256, translated
from handoff_core.layout import EXTERNAL_SHOWN
from handoff_core.services.secret_scan import scan_all

__all__ = ["Outbound", "Received", "external_dispatches", "package_dispatch", "receive_return"]

MAX_PACKAGED_FILE = 1024 * 1024  # a larger file is "large binary or data": summarise it instead


@dataclass(frozen=True)
class Outbound:
    locator: str
    size: int
    sha256: str
    included: tuple[str, ...]
    excluded: tuple[dict[str, str], ...]


@dataclass(frozen=True)
class Received:
    attempt_id: str
    raw_locator: str
    raw_sha256: str
    return_locator: str
    extracted_files: int


def _git(project: Path, *args: str) -> str:
    try:
        done = subprocess.run(["git", *args], cwd=project, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return done.stdout.strip() or "unknown"


def _walk(project: Path, parts: tuple[str, ...], skipped: list[dict[str, str]]) -> list[tuple[str, ...]]:
    """Repository-relative files under ``parts``, walked by handle, symlinks never followed; folders
    excluded by default are noted in ``skipped`` and not entered."""
    with walked(project, parts[:-1]) as fd:
        info = os.stat(parts[-1], dir_fd=fd, follow_symlinks=False)
    if stat.S_ISREG(info.st_mode):
        return [parts]
    if not stat.S_ISDIR(info.st_mode):
        skipped.append({"path": "/".join(parts), "reason": "not a regular file (a symlink, device or FIFO)"})
        return []
    if (reason := excluded_reason((*parts, "x"))) is not None:
        skipped.append({"path": "/".join(parts), "reason": reason})
        return []
    with walked(project, parts) as fd:
        names = sorted(os.listdir(fd))
    return [found for name in names for found in _walk(project, (*parts, name), skipped)]


def _named(named: str) -> tuple[str, ...]:
    if named.startswith("/"):
        raise InvalidContent(f"{named!r} is not a project-relative path (no leading '/')")
    return relative_parts(named.rstrip("/"))  # a folder may be named with its trailing slash


def _select(project: Path, named: list[str]) -> tuple[list[tuple[str, bytes]], list[dict[str, str]]]:
    excluded: list[dict[str, str]] = []
    paths = sorted({path for name in named for path in _walk(project, _named(name), excluded)})
    included: list[tuple[str, bytes]] = []
    for path in paths:
        shown = "/".join(path)
        if (reason := excluded_reason(path)) is not None:
            excluded.append({"path": shown, "reason": reason})
            continue
        with walked(project, path[:-1]) as fd:
            data = read_regular(fd, path[-1], limit=MAX_PACKAGED_FILE) if _small(fd, path[-1]) else None
        if data is None or b"\x00" in data[:8192]:
            excluded.append({"path": shown, "reason": "large or binary file"})
            continue
        included.append((shown, data))
    return included, sorted(excluded, key=lambda item: item["path"])


def _small(fd: int, name: str) -> bool:
    return os.stat(name, dir_fd=fd, follow_symlinks=False).st_size <= MAX_PACKAGED_FILE


def _scan(files: list[tuple[str, bytes]]) -> None:
    findings = scan_all([(path, data.decode("utf-8", "replace")) for path, data in files])
    found = [f"{finding.field} line {finding.line}: {finding.kind}" for finding in findings]
    if found:
        raise InvalidContent("the package is blocked: secrets found in " + "; ".join(found[:20]) + ". Remove them")


def _publish_all(project: Path, parts: tuple[str, ...], files: list[tuple[str, bytes]]) -> None:
    for relative, data in files:
        pieces = relative.split("/")
        with walked(project, (*parts, *pieces[:-1]), create=True) as fd:
            publish(fd, pieces[-1], data)


@translated
def package_dispatch(
    project: Path, task: Task, scope_id: str, dispatch_id: str, named: list[str], channel: Channel, now: datetime
) -> Outbound:
    root = delivery_parts(scope_id, task.task, dispatch_id)
    if (project.joinpath(*root)).exists():
        raise WriteConflict(f"{'/'.join(root)} exists already: nothing is overwritten; make a new dispatch id")
    included, excluded = _select(project, named)
    _scan(included)
    checkpoint = _git(project, "rev-parse", "HEAD")
    dirty = _git(project, "status", "--porcelain")
    manifest = Manifest(
        dispatch_id=dispatch_id,
        task_id=task.task,
        task_kind=task.kind,
        created_at=now.isoformat(),
        repository_label=project.name,
        branch=_git(project, "rev-parse", "--abbrev-ref", "HEAD"),
        base_checkpoint=checkpoint,
        workspace_state="clean" if dirty in ("", "unknown") else "snapshot",
        included=[path for path, _ in included],
        excluded=excluded,
        scan_notes=f"{len(included)} file(s) scanned, none holds a secret",
    )
    staged = [("DISPATCH.md", render_dispatch(task, dispatch_id, channel, checkpoint).encode())]
    staged += [("MANIFEST.json", render_manifest(manifest).encode())]
    staged += [(f"source/{path}", data) for path, data in included]
    archive = deterministic_zip(staged)
    digest = sha256(archive)
    name = f"{dispatch_id}.outbound.zip"
    _publish_all(project, (*root, "outbound", "staging"), staged)
    _publish_all(
        project,
        (*root, "outbound"),
        [(name, archive), (f"{dispatch_id}.outbound.sha256", f"{digest}  {name}\n".encode())],
    )
    locator = "/".join((*root, "outbound", name))
    _publish_all(project, root, [("SESSION.md", render_session(locator, len(archive), digest, manifest).encode())])
    return Outbound(locator, len(archive), digest, tuple(manifest.included), tuple(excluded))


@translated
def receive_return(
    project: Path, scope_id: str, task_id: str, dispatch_id: str, attempt_id: str, raw: bytes, is_text: bool
) -> Received:
    root = delivery_parts(scope_id, task_id, dispatch_id)
    attempt = (*root, "inbound", check_exchange_id(attempt_id, "attempt id"))
    if not project.joinpath(*root, "outbound").is_dir():
        raise InvalidContent(f"no outbound package under {'/'.join(root)}: package the dispatch first")
    if project.joinpath(*attempt).exists():
        raise WriteConflict(f"{'/'.join(attempt)} exists already: nothing is overwritten; use a new attempt id")
    raw_name = "response.txt" if is_text else "response.zip"  # never the provider's own file name
    _publish_all(project, (*attempt, "raw"), [(raw_name, raw)])  # persisted before anything else
    raw_locator = "/".join((*attempt, "raw", raw_name))
    standard = f"{dispatch_id}.return.{attempt_id}.zip"
    if is_text:
        text = raw.decode("utf-8", "replace")
        staged = [("RETURN.md", render_return(dispatch_id, attempt_id, raw_locator, text).encode())]
        _publish_all(project, (*attempt, "staging"), staged)
        archive, count = deterministic_zip(staged), 0
    else:
        infos = check_archive(raw)  # refuses, naming the entry and the rule, before extraction
        count = len([info for info in infos if not info.is_dir()])
        try:
            with walked(project, (*attempt, "extracted"), create=True) as fd:
                extract_checked(raw, infos, fd)
        except BaseException:
            shutil.rmtree(project.joinpath(*attempt, "extracted"), ignore_errors=True)  # only raw/ stays
            raise
        archive = raw  # an accepted archive is kept as it came
    digest = sha256(archive)
    sealed = [(standard, archive), (f"{standard[:-4]}.sha256", f"{digest}  {standard}\n".encode())]
    _publish_all(
        project, attempt, [*sealed, ("ACCEPTANCE.md", acceptance_stub(dispatch_id, attempt_id, digest).encode())]
    )
    return Received(attempt_id, raw_locator, sha256(raw), "/".join((*attempt, standard)), count)


def external_dispatches(project: Path, shown: int = EXTERNAL_SHOWN) -> list[str]:
    """For status: one line per sealed outbound package, with its return attempts; the ``shown``
    most recently sealed, then one line saying how many more there are."""
    sessions = list(project.joinpath(*DELIVERY_ROOT).glob("*/*/*/SESSION.md"))
    newest = sorted(sessions, key=lambda path: (-path.lstat().st_mtime_ns, str(path)))
    found = []
    for session in newest[:shown]:
        dispatch = session.parent
        attempts = sorted(path.name for path in (dispatch / "inbound").glob("*") if path.is_dir())
        found.append(
            f"{dispatch.relative_to(project).as_posix()}: sealed; return attempts: {', '.join(attempts) or 'none'}"
        )
    if len(newest) > shown:
        found.append(f"and {len(newest) - shown} older under {'/'.join(DELIVERY_ROOT)}/ (not listed)")
    return found

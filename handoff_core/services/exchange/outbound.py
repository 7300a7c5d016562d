"""External-web exchange: sealed outbound packages and untrusted return archives (seed 002).

Outbound: the files the Lead names, less the default exclusions, scanned for secrets, staged with
DISPATCH.md and MANIFEST.json, sealed as a deterministic ZIP with its ``.sha256`` and SESSION.md.
Inbound returns are ``services.returns``. Nothing is ever overwritten: every file is published
write-once, and an existing dispatch or attempt is a refusal.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from handoff_core.contract.exchange import (
    DELIVERY_ROOT,
    Channel,
    Manifest,
    delivery_parts,
    render_dispatch,
    render_manifest,
    render_session,
)
from handoff_core.contract.exclusions import excluded_reason
from handoff_core.contract.return_policy import policy_for
from handoff_core.contract.task import Task
from handoff_core.contract.values import relative_parts
from handoff_core.errors import GitError, InvalidContent, WriteConflict
from handoff_core.files import git, git_process
from handoff_core.files.archives import deterministic_zip
from handoff_core.files.paths import read_regular, walked
from handoff_core.files.publishing import publish
from handoff_core.files.task_dir import sha256, translated
from handoff_core.layout import EXTERNAL_SHOWN
from handoff_core.services.secrets.secret_scan import scan_all

__all__ = ["Outbound", "external_dispatches", "package_dispatch", "publish_all"]

MAX_PACKAGED_FILE = 1024 * 1024  # a larger file is "large binary or data": summarise it instead


@dataclass(frozen=True)
class Outbound:
    locator: str
    size: int
    sha256: str
    included: tuple[str, ...]
    excluded: tuple[dict[str, str], ...]


def _git(project: Path, *args: str) -> str:
    """What git says, for the manifest; "unknown" when it cannot say (no repository, no commit, a timeout)."""
    try:
        _, out = git_process.run(project, *args)
    except GitError:
        return "unknown"
    return out.decode("utf-8", "replace").strip() or "unknown"


def _workspace_state(project: Path) -> str:
    """ "snapshot" when the work tree differs from HEAD, read as the audit reads it (no filter driver
    the repository or a submodule's config names runs); "clean" too when there is no repository."""
    try:
        return "snapshot" if git.dirty_paths(project) else "clean"
    except GitError:
        return "clean"


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


def _secrets_left_out(
    included: list[tuple[str, bytes]], excluded: list[dict[str, str]]
) -> tuple[list[tuple[str, bytes]], list[dict[str, str]]]:
    """Files whose content holds a secret move from included to excluded, each with what was found where."""
    findings = scan_all([(path, data.decode("utf-8", "replace")) for path, data in included])
    found: dict[str, list[str]] = {}
    for finding in findings:
        found.setdefault(finding.field, []).append(f"{finding.kind} on line {finding.line}")
    kept = [(path, data) for path, data in included if path not in found]
    left = [{"path": path, "reason": f"holds a secret ({'; '.join(what[:3])})"} for path, what in found.items()]
    return kept, sorted([*excluded, *left], key=lambda item: item["path"])


def _check_dispatch(text: str) -> None:
    """DISPATCH.md carries the TASK's own text: a secret there cannot be left out, so it blocks the package."""
    found = [finding.describe() for finding in scan_all([("DISPATCH.md", text)])]
    if found:
        raise InvalidContent(f"the package is blocked: secrets in {'; '.join(found[:20])}: remove them from the TASK")


def _scan_notes(included: list[tuple[str, bytes]], excluded: list[dict[str, str]]) -> str:
    secret = sum(item["reason"].startswith("holds a secret") for item in excluded)
    left = f"; {secret} more held secrets and are left out (see excluded)" if secret else ""
    return f"{len(included)} file(s) sent, each scanned: none holds a secret{left}"


def publish_all(project: Path, parts: tuple[str, ...], files: list[tuple[str, bytes]]) -> None:
    """Each ``(relative path, bytes)`` published write-once below ``project/parts``."""
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
    included, excluded = _secrets_left_out(*_select(project, named))
    checkpoint = _git(project, "rev-parse", "HEAD")
    manifest = Manifest(
        dispatch_id=dispatch_id,
        task_id=task.task,
        task_kind=task.kind,
        created_at=now.isoformat(),
        repository_label=project.name,
        branch=_git(project, "rev-parse", "--abbrev-ref", "HEAD"),
        base_checkpoint=checkpoint,
        workspace_state=_workspace_state(project),
        included=[path for path, _ in included],
        excluded=excluded,
        scan_notes=_scan_notes(included, excluded),
        return_policy=policy_for(task.kind),
    )
    dispatch = render_dispatch(task, dispatch_id, channel, checkpoint, manifest.return_policy)
    _check_dispatch(dispatch)
    staged = [("DISPATCH.md", dispatch.encode())]
    staged += [("MANIFEST.json", render_manifest(manifest).encode())]
    staged += [(f"source/{path}", data) for path, data in included]
    archive = deterministic_zip(staged)
    digest = sha256(archive)
    name = f"{dispatch_id}.outbound.zip"
    publish_all(project, (*root, "outbound", "staging"), staged)
    publish_all(
        project,
        (*root, "outbound"),
        [(name, archive), (f"{dispatch_id}.outbound.sha256", f"{digest}  {name}\n".encode())],
    )
    locator = "/".join((*root, "outbound", name))
    publish_all(project, root, [("SESSION.md", render_session(locator, len(archive), digest, manifest).encode())])
    return Outbound(locator, len(archive), digest, tuple(manifest.included), tuple(excluded))


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

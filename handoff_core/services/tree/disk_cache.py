"""Verdicts and claims kept on disk between processes, so a fresh server need not judge every file again.

Why it is as safe as the files. Each entry is a verdict together with what it rests on — a 128-bit
digest of the task directory's probe, or the stamp of the file a claim was judged from — and it is
used only after that probe or stamp is taken again from the files and matches (``Verdicts.holds``,
``ClaimIndex``): the cache can spare a read, never answer instead of one. It
holds only settled verdicts (see ``verdicts``) and lives outside the project, per user, named by
the state root. Anything wrong with it — missing, cut short, written by other code (the code's own
files are fingerprinted), for another state root, malformed — makes it empty. Deleting it changes
no answer, only how long the next walk takes.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from typing import Any, Literal, TypeVar, cast

import handoff_core
from handoff_core.contract.ids import Ref
from handoff_core.contract.proof import PROOFS
from handoff_core.contract.scope import Scope, SharedPath
from handoff_core.files.cache_file import load_cache, save_cache
from handoff_core.layout import AUTHORISED_ACTIONS, KINDS, TASK_STATES
from handoff_core.services.rules.ownership import Claim
from handoff_core.services.tree.status import TaskStatus

__all__ = ["CACHE_FORMAT", "MAX_CACHE_BYTES", "DiskCache", "default_cache_dir"]

# 2: a verdict row carries the REPORT's proof; 3: a scope its git remote; 4: its actions and stops;
# 5: its links (retry_of, review_of, self_writer), a claim's artifacts, worktree and self writer
CACHE_FORMAT = 5
MAX_CACHE_BYTES = 512 * 1024 * 1024  # a verdict row is ~150 bytes, a claim row ~120: millions of tasks
T = TypeVar("T")
_MALFORMED = (KeyError, IndexError, TypeError, ValueError, AttributeError)


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "handoff-mcp"


def code_fingerprint() -> str:
    """Which code judged: the name, size and mtime of every module of ``handoff_core``."""
    package = Path(handoff_core.__file__).parent
    stats = sorted((str(p.relative_to(package)), p.stat().st_size, p.stat().st_mtime_ns) for p in package.rglob("*.py"))
    return hashlib.sha256(repr(stats).encode()).hexdigest()


Section = Literal["verdicts", "claims"]


class DiskCache:
    """One state root's cache: a file per section, ``<dir>/<sha256 of the root>.<section>.json``.

    Sections are apart so that a dispatch, which needs only the claims, never parses the verdicts.
    """

    def __init__(self, directory: Path, state_root: Path) -> None:
        self.directory = directory
        self._root = str(state_root)
        self._name = hashlib.sha256(self._root.encode()).hexdigest()[:32]
        self._keyed = ""

    def keyed_by(self, anchor_key: bytes) -> None:
        """Keep the verdicts of a reader judging by the Lead's anchor apart from those judged by the files
        alone (an executor's server, the same user): each is right only for its own judge."""
        self._keyed = hashlib.sha256(b"handoff-mcp cache of an anchor\0" + anchor_key).hexdigest()[:16]
        self._name = hashlib.sha256(f"{self._root}\0{self._keyed}".encode()).hexdigest()[:32]
        self.__dict__.pop("_stamp", None)

    @cached_property
    def _stamp(self) -> dict[str, object]:
        """What a cache file must say of itself to be used (taken on first use, not at server start)."""
        return {"format": CACHE_FORMAT, "root": self._root, "code": code_fingerprint(), "anchor": self._keyed}

    def path(self, section: Section) -> Path:
        return self.directory / f"{self._name}.{section}.json"

    def load(self, section: Section) -> object:
        """The section's rows, or an empty list when the file is missing or not ours to trust."""
        data = load_cache(self.path(section), MAX_CACHE_BYTES)
        try:
            payload = json.loads(data) if data is not None else None
        except ValueError:
            return []
        if not isinstance(payload, dict) or any(payload.get(k) != v for k, v in self._stamp.items()):
            return []
        return payload.get("rows", [])

    def save(self, section: Section, rows: object) -> bool:
        payload = {**self._stamp, "rows": rows}
        return save_cache(self.path(section), json.dumps(payload, separators=(",", ":")).encode())


def decoded(rows: object, decode: Callable[[Any], T]) -> list[T]:
    """Rows decoded one by one; a malformed cache yields nothing at all (it is then simply not used)."""
    try:
        return [decode(row) for row in cast(list[Any], rows)]
    except _MALFORMED:
        return []


def _encode_scope(scope: Scope | None) -> list[Any] | None:
    if scope is None:
        return None
    shared = [[s.path, s.owner] for s in scope.shared]
    head = [scope.workspace, scope.writable, scope.read_only, shared, scope.artifacts, scope.notes, scope.resources]
    tail = [scope.worktree, scope.branch, scope.base, scope.dirty, scope.remote, scope.actions, scope.stop_conditions]
    return [*head, *tail, *_links(scope)]


def _decode_scope(row: list[Any] | None) -> Scope | None:
    if row is None:
        return None
    shared = tuple(SharedPath(path, owner) for path, owner in row[3])
    return Scope(
        workspace=row[0],
        writable=tuple(row[1]),
        read_only=tuple(row[2]),
        shared=shared,
        artifacts=tuple(row[4]),
        notes=str(row[5]),
        resources=tuple(row[6]),
        worktree=str(row[7]),
        branch=str(row[8]),
        base=str(row[9]),
        dirty=tuple(str(path) for path in row[10]),
        remote=str(row[11]),
        actions=tuple(action for name in row[12] for action in AUTHORISED_ACTIONS if action == name),
        stop_conditions=tuple(str(line) for line in row[13]),
        retry_of=str(row[14]),
        review_of=str(row[15]),
        self_writer=str(row[16]),
    )


def _links(scope: Scope) -> list[str]:
    return [scope.retry_of, scope.review_of, scope.self_writer]


def encode_body(status: TaskStatus) -> list[Any]:
    """What a status says apart from its ref and times: many tasks share one."""
    s = status
    scope = _encode_scope(s.scope)
    body = [s.kind, s.state, s.report_status, scope, s.has_locator, s.temp_files, s.problems, s.outstanding, s.notes]
    return [*body, s.proof, s.original]


def decode_body(row: list[Any]) -> dict[str, Any]:
    """The fields of ``TaskStatus`` between its ref and its times, by name, checked for shape."""
    kind, state, report_status, scope, locator, temps, problems, outstanding, notes, proof, original = row
    if kind not in (*KINDS, None) or state not in TASK_STATES or proof not in (*PROOFS, None):
        raise ValueError(row)
    report = None if report_status is None else str(report_status)
    strings = (tuple(str(t) for t in temps), tuple(str(p) for p in problems))
    return {
        "kind": kind,
        "state": state,
        "report_status": report,
        "scope": _decode_scope(scope),
        "has_locator": bool(locator),
        "temp_files": strings[0],
        "problems": strings[1],
        "outstanding": bool(outstanding),
        "notes": tuple(notes),
        "proof": proof,
        "original": bool(original),
    }


def encode_claim(claim: Claim | None) -> list[Any] | None:
    if claim is None:
        return None
    return [
        claim.workspace,
        claim.writable,
        claim.shared,
        claim.unreadable,
        claim.resources,
        claim.artifacts,
        claim.worktree,
        claim.self_writer,
    ]


def decode_claim(ref: Ref, row: list[Any] | None) -> Claim | None:
    if row is None:
        return None
    shared = tuple((str(path), str(owner)) for path, owner in row[2])
    return Claim(
        ref=ref,
        workspace=row[0],
        writable=tuple(row[1]),
        shared=shared,
        age_seconds=0.0,
        unreadable=bool(row[3]),
        resources=tuple(row[4]),
        artifacts=tuple(row[5]),
        worktree=str(row[6]),
        self_writer=str(row[7]),
    )

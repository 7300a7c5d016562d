"""How an executor's session ends: the Stop hook's blocks counted per session, and the record that a
session ended without its task's REPORT, which the Lead's status can show.

Both live in this user's cache directory (``$HANDOFF_CACHE_DIR``, else ``$XDG_CACHE_HOME`` or
``~/.cache``, then ``handoff-mcp``), never in the project: the handoff tree holds only what the
contract names, and a count the executor could reset there would be no bound. A cache that cannot
be written leaves the hook with the CLI's own re-entry flag (``stop_hook_active``) as its bound.
Stdlib only: the hook process imports this.
"""

from __future__ import annotations

import json
import os
import time

__all__ = ["MAX_STOP_BLOCKS", "Ending", "count_block", "ended_without_report", "record_ending"]

MAX_STOP_BLOCKS = 3  # blocks of one session's end before the hook lets it go (it never loops)
_ENDINGS, _BLOCKS = "endings", "stop-blocks"


def _cache_dir() -> str:
    given = os.environ.get("HANDOFF_CACHE_DIR")
    if given and given != "off":
        return given
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "handoff-mcp")


def _digest(*parts: str) -> str:
    from handoff_core.services.evidence.task_pin import task_sha256

    return task_sha256("\0".join(parts).encode("utf-8", "surrogateescape"))[:32]


def _write(path: str, data: bytes) -> None:
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    temp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
    os.replace(temp, path)  # noqa: TID251 - a cache record, replaced whole on purpose


def _read(path: str) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        return os.read(fd, 4096)
    finally:
        os.close(fd)


def count_block(state_root: str, ref: str, session_id: str) -> int | None:
    """Count one more block of this session's end; the count so far, before this one (None: the
    cache is unusable)."""
    path = os.path.join(_cache_dir(), _BLOCKS, _digest(os.path.realpath(state_root), ref, session_id))
    try:
        seen = _read(path)
        count = int(seen) if seen is not None and seen.strip().isdigit() else 0
        _write(path, str(count + 1).encode())
    except (OSError, ValueError):
        return None
    return count


class Ending:
    """A session of the task that ended with no REPORT: which, and when (seconds since the epoch)."""

    __slots__ = ("at", "session_id")

    def __init__(self, session_id: str, at: float) -> None:
        self.session_id, self.at = session_id, at


def _ending_path(state_root: str, ref: str) -> str:
    return os.path.join(_cache_dir(), _ENDINGS, _digest(os.path.realpath(state_root), ref))


def record_ending(state_root: str, ref: str, session_id: str) -> None:
    """Note that a session of ``ref`` ended without its REPORT (never an error: a note for status)."""
    record = {"ref": ref, "session_id": session_id[:200], "at": time.time()}
    try:
        _write(_ending_path(state_root, ref), json.dumps(record).encode())
    except OSError:
        return


def ended_without_report(state_root: str, ref: str) -> Ending | None:
    """The last session of ``ref`` that ended without a REPORT, as the Stop hook recorded it (the
    caller checks that the task still has no REPORT: one may have been written since)."""
    data = _read(_ending_path(state_root, ref))
    try:
        record = json.loads(data) if data is not None else None
        if not isinstance(record, dict) or record.get("ref") != ref:
            return None
        return Ending(str(record["session_id"]), float(record["at"]))
    except (ValueError, KeyError, TypeError):
        return None

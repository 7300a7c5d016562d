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

__all__ = ["MAX_STOP_BLOCKS", "Ending", "count_block", "ended_without_report", "record_ending", "stop_blocks"]

MAX_STOP_BLOCKS = 3  # blocks of one session's end before the hook lets it go (it never loops)
_ENDINGS, _BLOCKS = "endings", "stop-blocks"


def _cache_dir() -> str:
    from handoff_core.files.executor_home import cache_root

    return cache_root()


def _brokered(op: str, ref: str, session_id: str) -> dict[str, object] | None:
    """In a sandbox, the record is kept by its broker outside it (where the executor cannot reset or
    forge it): the broker's answer; None outside a sandbox. A broker that does not answer is a
    cache that cannot be written (``OSError``)."""
    if not (path := os.environ.get("HANDOFF_BROKER")):  # layout.BROKER_VARIABLE (a test pins the two equal)
        return None
    from handoff_core.files.local_socket import ask

    return ask(path, {"op": op, "ref": ref, "session_id": session_id}, 10.0)


def _digest(*parts: str) -> str:
    from handoff_core.contract.digest import sha256_hex

    return sha256_hex("\0".join(parts).encode("utf-8", "surrogateescape"))[:32]


def _create(path: str, data: bytes) -> bool:
    """Create ``path`` holding ``data``; False when it exists already (every record is written once:
    a count is the number of records, so nothing is ever renamed over another)."""
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except FileExistsError:
        return False
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
    return True


def count_block(state_root: str, ref: str, session_id: str) -> int | None:
    """Count one more block of this session's end: one new file in the session's folder. The count
    so far, before this one (None: the cache is unusable)."""
    try:
        if (answer := _brokered("count_block", ref, session_id)) is not None:
            count = answer.get("count")
            return count if isinstance(count, int) else None
        folder = os.path.join(_cache_dir(), _BLOCKS, _digest(os.path.realpath(state_root), ref, session_id))
        for count in range(MAX_STOP_BLOCKS + 1):
            if _create(os.path.join(folder, str(count)), b""):
                return count
    except OSError:
        return None
    return MAX_STOP_BLOCKS


def stop_blocks(state_root: str, ref: str, session_id: str, active: bool) -> bool:
    """Whether this end of a session of ``ref``, which has no REPORT, is blocked: counted, and after
    ``MAX_STOP_BLOCKS`` blocks (or, with no count to be had, once the CLI says it blocked already:
    ``active``) let go and recorded as an end without a REPORT."""
    count = count_block(state_root, ref, session_id) if session_id else None
    if (count is None and active) or (count is not None and count >= MAX_STOP_BLOCKS):
        record_ending(state_root, ref, session_id)
        return False
    return True


class Ending:
    """A session of the task that ended with no REPORT: which, and when (seconds since the epoch)."""

    __slots__ = ("at", "session_id")

    def __init__(self, session_id: str, at: float) -> None:
        self.session_id, self.at = session_id, at


def _endings(state_root: str, ref: str) -> str:
    return os.path.join(_cache_dir(), _ENDINGS, _digest(os.path.realpath(state_root), ref))


def record_ending(state_root: str, ref: str, session_id: str) -> None:
    """Note that a session of ``ref`` ended without its REPORT (never an error: a note for status)."""
    record = {"ref": ref, "session_id": session_id[:200], "at": time.time()}
    try:
        if _brokered("record_ending", ref, session_id) is not None:
            return
        _create(os.path.join(_endings(state_root, ref), _digest(session_id)), json.dumps(record).encode())
    except OSError:
        return


def _read(path: str) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        return os.read(fd, 4096)
    finally:
        os.close(fd)


def _ending(path: str, ref: str) -> Ending | None:
    data = _read(path)
    try:
        record = json.loads(data) if data is not None else None
        if not isinstance(record, dict) or record.get("ref") != ref:
            return None
        return Ending(str(record["session_id"]), float(record["at"]))
    except (ValueError, KeyError, TypeError):
        return None


def ended_without_report(state_root: str, ref: str) -> Ending | None:
    """The last session of ``ref`` that ended without a REPORT, as the Stop hook recorded it (the
    caller checks that the task still has no REPORT: one may have been written since)."""
    folder = _endings(state_root, ref)
    try:
        names = os.listdir(folder)[:1000]
    except OSError:
        return None
    found = [ending for name in names if (ending := _ending(os.path.join(folder, name), ref)) is not None]
    return max(found, key=lambda ending: ending.at) if found else None

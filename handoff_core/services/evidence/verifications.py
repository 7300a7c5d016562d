"""The last verification of each task (``verify_task``), kept for status in this user's cache.

No handoff file holds the Lead's acceptance: the seed keeps it in the caller's Evidence, which this
server does not write [seed 000 session-files: 原 Evidence 或当前 Work 工件引用这些文件并保存 Lead 验收;
定位文件……不承载执行进度、业务 Outcome 或另一套验收]. So a verification writes nothing in the project:
its answer is what the Lead records there. Its verdict and the one line that says why are kept here,
outside the project (``cache_root()/verifications``, signed with this user's cache key:
``files.cache_file``), where a sandboxed executor cannot write, so that status, ``status
--json``, the board and ``read_handoff`` show the last one. It names the REPORT it judged by the
REPORT's mtime: a REPORT replaced since leaves it unshown. Losing it costs one more ``verify_task``.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from handoff_core.contract.digest import sha256_hex
from handoff_core.contract.record import NamedTuple
from handoff_core.files.cache_file import load_cache, save_cache
from handoff_core.files.executor_home import cache_root

__all__ = ["Recorded", "last_verification", "record_verification"]

_FOLDER = "verifications"
_LIMIT = 8192  # bytes of one record
_WHY = 600  # characters of its reason kept


class Recorded(NamedTuple):
    """A task's last verification as status shows it."""

    verdict: str  # passed, failed or unknown
    why: str  # one line
    at: float  # seconds since the epoch


def _digest(text: str) -> str:
    return sha256_hex(text.encode("utf-8", "surrogateescape"))[:32]


def _folder(state_root: str) -> Path:
    return Path(cache_root(), _FOLDER, _digest(os.path.realpath(state_root)))


def record_verification(state_root: str, ref: str, recorded: Recorded, report_mtime: float) -> bool:
    """Keep ``recorded`` as ``ref``'s last verification; False when the cache cannot be written (never an error)."""
    why = " ".join(recorded.why.split())[:_WHY]
    record = {"ref": ref, "verdict": recorded.verdict, "why": why, "at": recorded.at, "report_mtime": report_mtime}
    return save_cache(_folder(state_root) / _digest(ref), json.dumps(record).encode())


# Per folder: its mtime when listed, and the records it held then. A status asks once a returned task:
# one stat of the folder each, and a read only for a task that has a record.
_listed: dict[Path, tuple[int, frozenset[str]]] = {}
_listing = threading.Lock()


def _names(folder: Path) -> frozenset[str]:
    try:
        mtime = os.stat(folder).st_mtime_ns
    except OSError:
        return frozenset()
    with _listing:
        known = _listed.get(folder)
        if known is not None and known[0] == mtime:
            return known[1]
    try:
        names = frozenset(os.listdir(folder))
    except OSError:
        return frozenset()
    with _listing:
        _listed[folder] = (mtime, names)
    return names


def last_verification(state_root: str, ref: str, report_mtime: float | None) -> Recorded | None:
    """``ref``'s last verification, when it judged the REPORT there is now (``report_mtime``); else None."""
    if report_mtime is None:
        return None
    folder, name = _folder(state_root), _digest(ref)
    if name not in _names(folder):
        return None
    data = load_cache(folder / name, _LIMIT)
    try:
        record = json.loads(data) if data is not None else None
        if not isinstance(record, dict) or record.get("ref") != ref or record.get("report_mtime") != report_mtime:
            return None
        return Recorded(str(record["verdict"]), str(record["why"]), float(record["at"]))
    except (ValueError, KeyError, TypeError):
        return None

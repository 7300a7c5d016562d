"""What one task's files held when they were read: plain values the validator and status judge.

``files.reader`` fills these from disk; nothing here touches the file system.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from types import MappingProxyType

from handoff_core.contract.change import ChangeFacts
from handoff_core.contract.record import NamedTuple

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: handoff-validate never loads it
if TYPE_CHECKING:
    from handoff_core.layout import EntryKind

__all__ = ["MISSING", "PROBE_STAMP", "Entry", "Probe", "Stamp", "TaskSnapshot", "probe_ctimes"]


Stamp = tuple[int, int, int, int]  # (device, inode, size, mtime_ns): what a cached judgement is keyed on
# What a held verdict on a whole task directory is keyed on: the lstat of the directory and then of
# each handoff file present in it, each packed as ``PROBE_STAMP``, and the directory's entry names.
Probe = tuple[bytes, tuple[str, ...]]
# (device, inode, mode, links, size, mtime_ns, ctime_ns): packed, a held probe is one bytes object
# rather than a tuple of ints per file (a server holds one per task). Mode and link count are 32-bit
# in the kernel's inode; a value wider than its field is no probe at all (``reader._stamps``).
PROBE_STAMP = struct.Struct("<QQIIqqq")


def probe_ctimes(probe: Probe) -> list[int]:
    """The ctime of the directory and of each file the probe saw."""
    return [fields[6] for fields in PROBE_STAMP.iter_unpack(probe[0])]


class Entry(NamedTuple):
    kind: EntryKind
    data: bytes | None = None  # None for a regular file over MAX_FILE_BYTES (``oversize``)
    nlink: int = 1
    mtime: float = 0.0
    stamp: Stamp = (0, 0, 0, 0)
    oversize: bool = False


MISSING = Entry(kind="missing")
_NO_FILES: Mapping[str, Entry] = MappingProxyType({})


class TaskSnapshot(NamedTuple):
    change: ChangeFacts | None = None
    problems: tuple[str, ...] = ()  # why the walk stopped early
    same_number: int = 0  # entries of the round that occupy this task's number (the seed's prefix count)
    task_found: bool = False
    task_entries: tuple[str, ...] = ()
    files: Mapping[str, Entry] = _NO_FILES
    probe: Probe | None = None  # taken before the files were read, when the caller asked for one
    reused: bool = False  # the caller already holds a verdict for ``probe``: ``files`` was not read

    def file(self, name: str) -> Entry:
        return self.files.get(name, MISSING)

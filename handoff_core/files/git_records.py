"""Git's own records of a work tree read as files, with no git process: its ``HEAD``, the commit a
branch names (a loose ref, else the packed refs), and a reflog's entries.

These are the files git writes when it moves a ref; the executor's git writes them too, and an
executor outside the sandbox can rewrite every one. What they say now is git's state now (a ``HEAD``
read here is the ``HEAD`` the next git will read); a reflog entry is evidence of an earlier move,
whose absence proves nothing. Anything this module cannot read plainly (a reftable repository, an
odd line, a link) is ``None``: the caller asks git, or says it could not read it. Every read is
bounded. Stdlib only: the hook process imports this.
"""

from __future__ import annotations

import os

from handoff_core.files.git_config import small_file

__all__ = ["MAX_REFLOG", "Head", "ReflogEntry", "head_of", "ref_oid", "reflog"]

MAX_REFLOG = 1024 * 1024  # bytes of a reflog read, from its end: the latest entries
MAX_PACKED = 16 * 1024 * 1024
_HEX = frozenset(b"0123456789abcdef")
_OID_LENGTHS = (40, 64)


def _oid(text: bytes) -> str | None:
    return text.decode() if len(text) in _OID_LENGTHS and set(text) <= _HEX else None


class Head:
    """A ``HEAD`` file: the branch it names (``refs/heads/…``), or the commit a detached one holds."""

    __slots__ = ("oid", "ref")

    def __init__(self, ref: str | None, oid: str | None) -> None:
        self.ref, self.oid = ref, oid


def head_of(git_dir: bytes) -> Head | None:
    """The ``HEAD`` of the git dir ``git_dir``; None when it is no plain ``HEAD`` (or a reftable's stub)."""
    data = small_file(os.path.join(git_dir, b"HEAD"))
    if data is None:
        return None
    line = data.removesuffix(b"\n")
    if line.startswith(b"ref: refs/") and b"\n" not in line:
        ref = line[len(b"ref: ") :].decode("utf-8", "surrogateescape")
        return None if ref == "refs/heads/.invalid" else Head(ref, None)  # a reftable repository's stub
    oid = _oid(line)
    return None if oid is None else Head(None, oid)


def ref_oid(common_dir: bytes, name: str) -> str | None:
    """The object id the ref ``name`` (``refs/heads/…``) holds: its loose file, else its line in the
    packed refs; None when neither names it plainly (no such ref, or a form read only by git)."""
    raw = os.fsencode(name)
    if b"/../" in raw or raw.endswith(b"/..") or b"\0" in raw:
        return None
    loose = small_file(os.path.join(common_dir, raw), absent=b"")
    if loose:
        return _oid(loose.removesuffix(b"\n"))
    if loose is None:
        return None
    packed = small_file(os.path.join(common_dir, b"packed-refs"), absent=b"", limit=MAX_PACKED)
    for line in (packed or b"").split(b"\n"):
        oid, _, ref = line.partition(b" ")
        if ref == raw:
            return _oid(oid)
    return None


class ReflogEntry:
    """One line of a reflog: the ref moved from ``old`` to ``new``, and the message git wrote."""

    __slots__ = ("message", "new", "old")

    def __init__(self, old: str, new: str, message: str) -> None:
        self.old, self.new, self.message = old, new, message


def reflog(path: bytes) -> list[ReflogEntry] | None:
    """The entries of the reflog at ``path``, oldest first (its last ``MAX_REFLOG`` bytes); an empty list
    when there is none, None when it is not a plain file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return []
    except OSError:
        return None
    try:
        size = os.fstat(fd).st_size
        start = max(0, size - MAX_REFLOG)
        data = os.pread(fd, MAX_REFLOG, start)
    except OSError:
        return None
    finally:
        os.close(fd)
    lines = data.split(b"\n")
    if start:
        lines = lines[1:]  # the first line read is cut
    found = []
    for line in lines:
        head, _, message = line.partition(b"\t")
        fields = head.split(b" ", 2)
        if len(fields) == 3 and (old := _oid(fields[0])) and (new := _oid(fields[1])):  # noqa: PLR2004
            found.append(ReflogEntry(old, new, message.decode("utf-8", "replace")))
    return found

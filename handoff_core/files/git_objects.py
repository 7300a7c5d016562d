"""Commits read from git's loose object files, with no git process: a commit's parents, and the line
of commits from a checkpoint back to its base (what ``rev-list --parents`` lists for ``base..checkpoint``).

An object's name is the hash of its bytes: a loose object whose inflated bytes do not hash to the
name it is filed under is not read, so whoever writes the objects folder cannot make a commit say
another thing here. Only what git itself would read the same way is answered: a commit that is
packed, absent, odd or too big, a merge, a history longer than ``MAX_LINE``, and a repository that
rewrites parents for git (``info/grafts``, a ``shallow`` file) are ``None``: the caller asks git.
Every read is bounded.
"""

from __future__ import annotations

import hashlib
import os
import zlib

from handoff_core.files.git_config import small_file

__all__ = ["MAX_COMMIT", "MAX_LINE", "line_of", "parents_of"]

MAX_COMMIT = 256 * 1024  # bytes of one commit object, inflated (a message past this is left to git)
MAX_LINE = 64  # commits walked from the checkpoint back to the base; a longer line is left to git
_HASHES = {40: "sha1", 64: "sha256"}
_HEX = frozenset("0123456789abcdef")


def _named(oid: str) -> bool:
    return len(oid) in _HASHES and set(oid) <= _HEX


def parents_of(common_dir: bytes, oid: str) -> list[str] | None:
    """The parents of the loose commit ``oid`` in the repository whose common git dir is ``common_dir``;
    None when it is no loose commit whose bytes hash to its name."""
    if not _named(oid):
        return None
    path = os.path.join(common_dir, b"objects", oid[:2].encode(), oid[2:].encode())
    packed = small_file(path, limit=MAX_COMMIT)
    if not packed:
        return None
    inflate = zlib.decompressobj()
    try:
        raw = inflate.decompress(packed, MAX_COMMIT + 32)
    except zlib.error:
        return None
    if not inflate.eof or inflate.unconsumed_tail or hashlib.new(_HASHES[len(oid)], raw).hexdigest() != oid:
        return None
    header, _, body = raw.partition(b"\0")
    lines = body.split(b"\n")
    tree = lines[0][5:].decode("ascii", "replace") if lines[0].startswith(b"tree ") else ""
    if header != b"commit %d" % len(body) or len(tree) != len(oid) or not _named(tree):
        return None
    found = []
    for line in lines[1:]:  # git reads the parents right after the tree, and no further
        if not line.startswith(b"parent "):
            break
        parent = line[7:].decode("ascii", "replace")
        if len(parent) != len(oid) or not _named(parent):
            return None
        found.append(parent)
    return found


def line_of(common_dir: bytes, base: str, checkpoint: str) -> list[list[str]] | None:
    """The commits from ``checkpoint`` back to (not including) ``base``, each with its one parent, newest
    first — ``rev-list --parents checkpoint --not base`` on a line — when each is a loose commit with one
    parent and the line reaches ``base`` within ``MAX_LINE``; None for anything else (git decides)."""
    for rewrites in (b"shallow", os.path.join(b"info", b"grafts")):
        if os.path.lexists(os.path.join(common_dir, rewrites)):
            return None
    found: list[list[str]] = []
    at = checkpoint
    while at != base:
        parents = parents_of(common_dir, at)
        if parents is None or len(parents) != 1 or len(found) >= MAX_LINE:
            return None
        found.append([at, parents[0]])
        at = parents[0]
    return found if found else None

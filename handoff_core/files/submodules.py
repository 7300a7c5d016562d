"""The walk over a repository's populated submodules, and the listing of their config.

A submodule is a repository of its own: a ``git status``/``diff-files`` that compares a populated gitlink
starts a child git inside it, which reads the submodule's config (``.git/modules/<name>/config`` or its
own ``.git``). Command-line configuration (``GIT_CONFIG_COUNT``/``KEY_n``/``VALUE_n``, ``-c``) is passed
down to that child, so the names every populated gitlink's config plants, recursively, are overruled in
the one command (``submodule_listing``, read by ``git_config.overrides``). The walk is bounded: more
populated gitlinks or levels than it checks answer None, which every caller turns into an error, never
a clean tree.

Git recurses only into gitlink entries of the index whose directory holds ``.git``. ``may_hold_gitlinks``
proves there is none without a git start: an entry's mode is a 32-bit big-endian word in every index
version, so an index that is a small regular file without a gitlink's mode bytes anywhere, and keeps no
part elsewhere (a split or sparse index), holds no gitlink; anything unsure lists the index with git.

The child git drops ``GIT_WORK_TREE`` and obeys the submodule's own ``core.worktree``, so a value that
names another folder (a copy, an empty one) would have the submodule's changes read there: the walk
refuses a submodule whose ``core.worktree`` is not its own folder (same device and inode), reading it in
place when a plain reading of the config can tell, else from git's listing.
"""

from __future__ import annotations

import os
from collections.abc import Callable  # already loaded with os: the hook pays no import for it

from handoff_core.files.git_config import SUBMODULE_LISTED, git_dirs, silent_config, small_file

__all__ = [
    "GITLINKS",
    "GITLINK_MODE",
    "MAX_DEPTH",
    "MAX_INDEX",
    "MAX_SUBMODULES",
    "SUBMODULE_LISTING",
    "may_hold_gitlinks",
    "submodule_listing",
]

# An index entry's mode is a 32-bit big-endian word in every index version (2, 3, 4); a gitlink's is
# 0o160000. An index that does not hold these 4 bytes anywhere holds no gitlink entry.
GITLINK_MODE = b"\x00\x00\xe0\x00"
MAX_INDEX = 64 * 1024 * 1024  # an index past this: git is asked instead
MAX_SUBMODULES = 64  # populated gitlinks, all levels together; past this the answer is an error
MAX_DEPTH = 8
SUBMODULE_LISTING = ("config", "-z", "--get-regexp", SUBMODULE_LISTED)
GITLINKS = ("ls-files", "-s", "-z")


def may_hold_gitlinks(tree: str, index: bytes | None = None) -> bool:
    """Whether the index git reads in ``tree`` (or the file ``index``) may hold a gitlink entry. False
    only when the index is a small regular file (or absent: an empty index) without ``GITLINK_MODE``
    and no part of it lives elsewhere: a split index (``sharedindex.*`` beside it, which its ``link``
    extension names) or a sparse index (``sdir``: a directory entry stands for a tree) is unsure."""
    if index is None:
        found = git_dirs(os.fsencode(tree))
        if found is None:
            return True
        index = os.path.join(found[0], b"index")
        try:
            if any(name.startswith(b"sharedindex.") for name in os.listdir(found[0])):
                return True
        except OSError:
            return True
    data = small_file(index, absent=b"", limit=MAX_INDEX)
    return data is None or GITLINK_MODE in data or b"sdir" in data


def submodule_listing(
    top: str,
    ask: Callable[[str, tuple[str, ...], tuple[int, ...]], bytes],
    index: bytes | None = None,
    populated: list[str] | None = None,
) -> bytes | None:
    """The listings (as ``overrides`` reads them) of the config of every populated gitlink under
    ``top``, recursively; ``index`` is the index file git reads at ``top`` (else its own). ``ask(cwd,
    args, ok)`` runs git in ``cwd`` (its work tree) under the fixed environment and returns its output,
    raising when git fails. None when there are too many submodules or levels to decide. The folders
    of the populated gitlinks of ``top`` itself are added to ``populated``."""
    found: list[bytes] = []
    todo, count = [(top, index, 0)], 0
    while todo:
        tree, tree_index, depth = todo.pop()
        if depth:
            found.append(_submodule_config(tree, ask))
        if not may_hold_gitlinks(tree, tree_index):
            continue
        subs = [os.path.join(tree, path) for path in _gitlinks(ask(tree, GITLINKS, (0,)))]
        subs = [sub for sub in subs if os.path.lexists(os.path.join(sub, ".git"))]  # populated, as git asks
        count += len(subs)
        if subs and (depth >= MAX_DEPTH or count > MAX_SUBMODULES):
            return None
        if not depth and populated is not None:
            populated += subs
        todo += [(sub, None, depth + 1) for sub in subs]
    return b"\0".join(found)


def _gitlinks(listed: bytes) -> list[str]:
    """The paths of gitlink entries in ``git ls-files -s -z`` output (``mode oid stage\tpath`` records)."""
    paths = []
    for record in listed.split(b"\0"):
        meta, _, path = record.partition(b"\t")
        if meta.startswith(b"160000 ") and path:
            paths.append(path.decode("utf-8", "surrogateescape"))
    return paths


def _submodule_config(sub: str, ask: Callable[[str, tuple[str, ...], tuple[int, ...]], bytes]) -> bytes:
    """The listing of a populated submodule's config (empty when it is read in place and ``silent``),
    once its ``core.worktree`` is known to leave the submodule's work tree at ``sub``: git drops
    ``GIT_WORK_TREE`` for the child git it starts there, which obeys that config, so a value that
    names another folder (a copy, an empty one) would have the submodule's changes read there."""
    path = os.fsencode(sub)
    in_place = silent_config(path)
    known, value = (False, None) if in_place is None else _work_tree_named(in_place[1], in_place[2])
    if in_place is not None and b"ignore" in (in_place[1] + in_place[2]).lower():
        known = False  # a submodule.<name>.ignore there could hide a submodule nested in it: git lists it
    listing = b""
    if not known:
        listing = ask(sub, SUBMODULE_LISTING, (0, 1))
        value = _listed_work_tree(listing)
    found = git_dirs(path) if in_place is None else (in_place[0], b"")
    if not _own_work_tree(path, None if found is None else found[0], value):
        from handoff_core.errors import GitError  # here: only a refusal pays for the module

        shown = os.fsdecode((value or b"")[:200])
        raise GitError(
            f"the submodule {sub} has core.worktree {shown!r} in its config, which is not that folder, so git "
            f"would read another folder's files for it: unset it (git -C {sub} config --unset core.worktree) "
            "and try again"
        )
    return listing


def _listed_work_tree(listing: bytes) -> bytes | None:
    """The last ``core.worktree`` of a ``SUBMODULE_LISTING`` (git obeys the last), ``b""`` for one
    without a value (git refuses it), None when there is none."""
    value = None
    for record in listing.split(b"\0"):
        key, _, rest = record.partition(b"\n")
        if key == b"core.worktree":
            value = rest
    return value


def _own_work_tree(sub: bytes, git_dir: bytes | None, value: bytes | None) -> bool:
    """Whether the work tree a ``core.worktree`` of ``value`` gives (relative to the git dir, as git
    resolves it) is the folder ``sub`` itself (same device and inode); True when it is unset."""
    if value is None:
        return True
    if not value or (git_dir is None and not os.path.isabs(value)):
        return False
    try:
        there, here = os.stat(os.path.join(git_dir or b"/", value)), os.stat(sub)
    except OSError:
        return False
    return (there.st_dev, there.st_ino) == (here.st_dev, here.st_ino)


# Bytes after which a config line is not read here: an escape or a continued line (a backslash),
# git's other whitespace, a NUL. A file holding one is unsure: git is asked.
_UNSURE = b"\\\r\v\f\0"


def _work_tree_named(config: bytes, worktree_config: bytes) -> tuple[bool, bytes | None]:
    """(known, value): the ``core.worktree`` that ``config`` and ``config.worktree`` set, when a plain
    reading of lines git would read alike can tell it; (False, None) whenever unsure."""
    if b"worktree" in worktree_config.lower():
        return False, None
    if b"worktree" not in config.lower():  # a key is spelled whole on its line: unset
        return True, None
    if any(byte in config for byte in _UNSURE):
        return False, None
    section: bytes | None = b""
    value = None
    for raw in config.split(b"\n"):
        line = raw.strip(b" \t")
        if not line or line[:1] in (b"#", b";"):
            continue
        if line[:1] == b"[":
            if (section := _section(line)) is None:
                return False, None
            continue
        key, equals, rest = line.partition(b"=")
        key, rest = key.rstrip(b" \t"), rest.strip(b" \t")
        if not (key[:1].isalpha() and key.replace(b"-", b"").isalnum()):
            return False, None
        if section == b"core" and key.lower() == b"worktree":
            if not equals or any(byte in rest for byte in b'\t"#;'):
                return False, None
            value = rest
    return True, value


def _section(line: bytes) -> bytes | None:
    """The section a header line opens, lower case (``[core]``: ``core``; a subsection's never reads
    ``core``); None for anything but a whole header line git reads alike."""
    inner = line[1:-1] if line.endswith(b"]") else b""
    name, quote, sub = inner.partition(b'"')
    if quote:  # [name "subsection"]
        if name == name.rstrip(b" \t") or not sub.endswith(b'"') or b'"' in sub[:-1]:
            return None
        name = name.rstrip(b" \t")
    if not name.replace(b"-", b"").replace(b".", b"").isalnum():
        return None
    return name.lower() + quote

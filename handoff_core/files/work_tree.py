"""What differs from ``HEAD`` in a work tree, read soundly: the index git compares the files with is
one of ours, made from ``HEAD``, never the work tree's own (which whoever works in the tree writes:
stat data, ``assume-unchanged``, ``skip-worktree``, fsmonitor state, untracked cache could each hide
a change). Ours is kept between reads (``index_cache``, verified before it is trusted), so a read
hashes only the files whose stat data changed since the last one.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from handoff_core.errors import GitError
from handoff_core.files import index_cache
from handoff_core.files.git_config import common_dir_of, git_dirs, refuse_attributes, small_file
from handoff_core.files.git_process import (
    Change,
    Running,
    environment,
    fields,
    name_status,
    planted,
    results,
    run,
    start,
)
from handoff_core.files.submodules import submodule_listing

__all__ = ["READ", "commit_of", "state"]

READ = ("--name-status", "-z", "--no-ext-diff", "--no-textconv", "--ignore-submodules=none", "--no-relative")


def commit_of(result: tuple[int, bytes]) -> str | None:
    """The commit a ``rev-parse --verify --quiet`` answered, or None."""
    return result[1].decode().strip() if result[0] == 0 else None


def _submodules_planted(tree: Path, fresh: dict[str, str], populated: list[str]) -> dict[str, str]:
    """``planted`` for a command that compares the index ``fresh`` names with the work tree ``tree``:
    a populated gitlink there makes git start a child git in the submodule, which reads its own config.
    The folders of those gitlinks are added to ``populated``."""

    def ask(cwd: str, args: tuple[str, ...], ok: tuple[int, ...]) -> bytes:
        keep = fresh if cwd == str(tree) else {"GIT_WORK_TREE": cwd}
        return Running(Path(cwd), args, ok, environment(keep), False).result()[1]

    inner = submodule_listing(str(tree), ask, os.fsencode(fresh["GIT_INDEX_FILE"]), populated)
    if inner is None:
        raise GitError(
            f"{tree} has too many submodules (or levels of them) to check the filters their config names; "
            "nothing was judged: remove the extra gitlinks and audit again"
        )
    return planted(tree, inner=inner) if inner.strip(b"\0") else {}


def _common_dir(tree: Path, keep: dict[str, str]) -> bytes:
    """The repository's common git dir, found here as git finds it (no process) unless unsure or a
    ``GIT_DIR`` is kept, which git reads instead."""
    found = None if "GIT_DIR" in keep else common_dir_of(str(tree))
    if found is not None:
        return found
    return run(tree, "rev-parse", "--path-format=absolute", "--git-common-dir", keep=keep)[1].rstrip(b"\n")


def _stamp(path: str) -> tuple[int, int, int] | None:
    """The index file's inode, size and modification time: git rewrites it whole when it changes it."""
    try:
        found = os.stat(path)
    except FileNotFoundError:
        return None
    return found.st_ino, found.st_size, found.st_mtime_ns


def _unstaged(tree: Path, fresh: dict[str, str], warm: Running | None) -> bytes:
    """What differs between our index and the work tree, our index refreshed. ``warm`` (a kept index,
    most files' stat data valid): the one ``git diff`` started already (the longest read, so first),
    which hashes each file whose stat changed (``diff.autoRefreshIndex``) and writes our index
    refreshed. Else every file is hashed once by the refresh, then compared by stat: ``git diff``
    would hash each file twice, to compare and to refresh."""
    if warm is not None:
        return warm.result()[1]
    run(tree, "update-index", "-q", "--refresh", keep=fresh, ok=(0, 1))
    return run(tree, "diff-files", *READ, "--", keep=fresh)[1]


_OTHERS = ("--others", "--exclude-per-directory=.gitignore")
_TAGGED = ("-t", "--modified", "--deleted")  # each path tagged: ? untracked, C changed, R removed


def _listed(tree: Path, fresh: dict[str, str], out: bytes) -> tuple[bytes, bytes]:
    """(unstaged, untracked) from a tagged ``ls-files`` against our index ``fresh``: with only untracked
    paths listed, no tracked file differs (git hashed each whose stat data changed, as ``git diff``
    would); any other tag, and ``git diff`` says what differs, as it does without a kept index."""
    records = out.split(b"\0")[:-1]
    others = [record[2:] for record in records if record[:2] == b"? "]
    untracked = b"".join(other + b"\0" for other in others)
    if len(others) == len(records):
        return b"", untracked
    return run(tree, "diff", *READ, "--", keep=fresh)[1], untracked


# ``git diff --cached`` answers, by work tree, HEAD and the SHA-256 of the index bytes git read: the
# same bytes against the same commit (whose tree no one can change) say the same again.
_STAGED: dict[tuple[str, str, bytes], bytes] = {}
_STAGED_LOCK = threading.Lock()
MAX_STAGED = 64  # answers remembered; past this the oldest is dropped
MAX_STAGED_ANSWER = 1024 * 1024  # a longer answer is not remembered


def _staged(
    tree: Path, since: list[str], keep: dict[str, str], folder: str
) -> tuple[Running | bytes, tuple[str, str, bytes] | None]:
    """What the work tree's index stages against ``since``: remembered for its bytes, or read by git from
    a copy of the bytes hashed (so the answer remembered is the answer for those bytes, whatever is
    written to the index meanwhile) with the key to remember it by. A kept ``GIT_INDEX_FILE`` or
    ``GIT_DIR``, an unborn ``HEAD``, no index file or a split one (``_split``): git reads the index as
    it is, and nothing is remembered."""
    dirs = None if not since or "GIT_INDEX_FILE" in keep or "GIT_DIR" in keep else git_dirs(os.fsencode(tree))
    data = None if dirs is None else small_file(os.path.join(dirs[0], b"index"), limit=index_cache.MAX_INDEX)
    if data is None or dirs is None or _split(dirs[0]):
        return start(tree, "diff", "--cached", *READ, "-M", *since, "--", keep=keep), None
    key = (str(tree), since[0], hashlib.sha256(data).digest())
    with _STAGED_LOCK:
        said = _STAGED.get(key)
    if said is not None:
        return said, None
    copy = os.path.join(folder, "staged")
    fd = os.open(copy, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    with open(fd, "wb") as out:
        out.write(data)
    return start(tree, "diff", "--cached", *READ, "-M", *since, "--", keep=keep | {"GIT_INDEX_FILE": copy}), key


def _split(git_dir: bytes) -> bool:
    """Whether the index may be split (a ``sharedindex.*`` beside it, which its ``link`` names): unsure is yes."""
    try:
        return any(name.startswith(b"sharedindex.") for name in os.listdir(git_dir))
    except OSError:
        return True


def _remember(key: tuple[str, str, bytes], said: bytes) -> None:
    if len(said) > MAX_STAGED_ANSWER:
        return
    with _STAGED_LOCK:
        _STAGED[key] = said
        while len(_STAGED) > MAX_STAGED:
            del _STAGED[next(iter(_STAGED))]


def state(
    tree: Path, head: str | None, keep: dict[str, str], meanwhile: Callable[[], None] | None = None
) -> list[Change]:
    """What differs from ``head`` in the work tree ``tree``, one change a path: staged (the index's blob
    ids against ``head``), then unstaged and untracked, both read against our index of ``head`` —
    every tracked file whose stat data changed since it was last hashed is hashed. Only ``.gitignore``
    files hide an untracked path (not ``info/exclude``). A populated submodule is read the same way,
    on its own (``_submodule_changed``): its index could hide a change inside it from the child git.
    ``meanwhile`` is called once its git processes run, before they are read."""
    since = [head] if head else []
    populated: list[str] = []
    refuse_attributes(_common_dir(tree, keep))
    with tempfile.TemporaryDirectory(prefix="handoff-index-") as folder:
        fresh = keep | {"GIT_INDEX_FILE": os.path.join(folder, "index")}
        held = index_cache.restore(tree, fresh["GIT_INDEX_FILE"]) if head else None
        restored = _stamp(fresh["GIT_INDEX_FILE"])
        if held is None or held != head:  # --reset keeps the stat data of each entry whose blob stays
            run(tree, "read-tree", *(["--reset"] if held else []), *(since or ["--empty"]), keep=fresh)
        fresh |= _submodules_planted(tree, fresh, populated)
        began = time.time()
        # A kept index and no populated submodule: the listing of untracked paths also says whether any
        # tracked file differs (``_listed``), and ``git diff`` runs only when one does.
        listed = held == head and not populated
        warm = start(tree, "diff", *READ, "--", keep=fresh) if held == head and not listed else None
        try:
            staged_by, key = _staged(tree, since, keep, folder)
            started = (
                *([staged_by] if isinstance(staged_by, Running) else []),
                start(tree, "ls-files", "-z", *(_TAGGED if listed else ()), *_OTHERS, keep=fresh),
            )
        except GitError:
            results(*([warm] if warm else []))
            raise
        try:
            try:
                meanwhile() if meanwhile is not None else None
            finally:
                unstaged = b"" if listed else _unstaged(tree, fresh, warm)
        finally:
            outs = results(*started)
        staged, untracked = outs[0][1] if isinstance(staged_by, Running) else staged_by, outs[-1][1]
        _remember(key, staged) if key is not None else None
        if listed:
            unstaged, untracked = _listed(tree, fresh, untracked)
        if head and not (held == head and _stamp(fresh["GIT_INDEX_FILE"]) == restored):  # else kept already
            index_cache.keep(tree, head, fresh["GIT_INDEX_FILE"], began)
    found: dict[str, Change] = {}
    for change in [*name_status(staged), *name_status(unstaged), *(Change("?", p) for p in fields(untracked))]:
        found.setdefault(change.path, change)
    for sub in populated:
        path = os.path.relpath(sub, tree)
        if path not in found and _submodule_changed(Path(sub)):
            found[path] = Change("M", path)
    return sorted(found.values(), key=lambda change: change.path)


def _submodule_changed(sub: Path) -> bool:
    """Whether the populated submodule ``sub`` differs from its own ``HEAD``, read as a work tree is
    read here (``state``, its submodules in turn): the child git that compares its gitlink trusts the
    submodule's index (``--assume-unchanged``, ``--skip-worktree``, stat data) and its
    ``info/attributes``. Their count and depth are bounded by the walk that found them."""
    keep = {"GIT_WORK_TREE": str(sub)}
    head = commit_of(run(sub, "rev-parse", "--verify", "--quiet", "HEAD", ok=(0, 1, 128), keep=keep))
    return bool(state(sub, head, planted(sub, keep) | keep))

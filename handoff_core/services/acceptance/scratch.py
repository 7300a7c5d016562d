"""The throwaway copy a task's checks are replayed in: a commit, or a work tree as it is now.

A private temporary folder (0700) holds the copy (``tree``) and the checks' own home (``home``, their
``$HOME`` and ``$TMPDIR``). The copy is a git repository of its own that borrows the project's
objects (``objects/info/alternates``) and checks out one tree with the hardened git (``files.git``:
no hooks, no filters the repository names, no global configuration): the project's repository is
read, never written. A work tree's state is made a tree the same way (its index and new blobs kept
in the copy's own object store): what git tracks and what is untracked but not ignored, as ``git
add -A`` sees it; ignored files (a virtualenv, ``node_modules``) are not copied. ``HEAD`` in the
copy is the commit replayed, or the work tree's ``HEAD``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from pathlib import Path

from handoff_core.contract.record import NamedTuple
from handoff_core.files import git, git_process

__all__ = ["Scratch", "remove", "scratch_copy"]


class Scratch(NamedTuple):
    folder: str  # the private temporary folder: removed whole afterwards
    tree: str  # the copy, a repository of its own
    home: str  # the checks' $HOME; $TMPDIR is its tmp/


def _common_objects(top: Path) -> str:
    common = git_process.run(top, "rev-parse", "--path-format=absolute", "--git-common-dir")[1].decode(
        "utf-8", "surrogateescape"
    )
    return os.path.join(common.rstrip("\n"), "objects")


def _object_format(top: Path) -> str:
    return git_process.run(top, "rev-parse", "--show-object-format")[1].decode().strip() or "sha1"


def _work_tree_state(top: Path, folder: str, objects: str, own_objects: str) -> tuple[str, str | None]:
    """The tree object of ``top``'s work tree as it is (made in the copy's object store), and its HEAD."""
    head = git.rev_parse(top, "HEAD")
    keep = git_process.planted(top) | {
        "GIT_WORK_TREE": str(top),
        "GIT_INDEX_FILE": os.path.join(folder, "index"),
        "GIT_OBJECT_DIRECTORY": own_objects,
        "GIT_ALTERNATE_OBJECT_DIRECTORIES": objects,
    }
    git_process.run(top, "read-tree", head or "--empty", keep=keep)
    git_process.run(top, "add", "-A", "--", ".", keep=keep)
    return git_process.run(top, "write-tree", keep=keep)[1].decode().strip(), head


def scratch_copy(top: Path, commit: str | None) -> Scratch:
    """A copy of ``commit`` (a full id), or of the work tree ``top`` as it is when ``commit`` is None;
    ``GitError`` when git cannot make it (the folder is removed first)."""
    folder = tempfile.mkdtemp(prefix="handoff-verify-")
    made = Scratch(folder, os.path.join(folder, "tree"), os.path.join(folder, "home"))
    try:
        os.makedirs(os.path.join(made.home, "tmp"), mode=0o700)
        os.mkdir(made.tree, 0o700)
        copy = Path(made.tree)
        git_process.run(copy, "init", "-q", "--template=", f"--object-format={_object_format(top)}")
        objects, own = _common_objects(top), os.path.join(made.tree, ".git", "objects")
        with open(os.path.join(own, "info", "alternates"), "w", encoding="utf-8") as alternates:
            alternates.write(f"{objects}\n")
        if commit is None:
            tree, head = _work_tree_state(top, folder, objects, own)
        else:
            tree, head = f"{commit}^{{tree}}", commit
        git_process.run(copy, "read-tree", tree)
        git_process.run(copy, "checkout-index", "-a", "-f")
        if head is not None:
            git_process.run(copy, "update-ref", "--no-deref", "HEAD", head)
    except BaseException:
        remove(folder)
        raise
    return made


def remove(folder: str) -> None:
    """The scratch folder removed whole, whatever the checks left in it: each folder made writable by
    its owner first (a check may have locked one), links removed, never followed."""
    with contextlib.suppress(OSError):
        os.chmod(folder, 0o700)
    for root, dirs, _ in os.walk(folder, followlinks=False):  # top-down: a folder is opened before its walk
        for name in dirs:
            path = os.path.join(root, name)
            with contextlib.suppress(OSError):
                if stat.S_ISDIR(os.lstat(path).st_mode):
                    os.chmod(path, 0o700)
    shutil.rmtree(folder, ignore_errors=True)

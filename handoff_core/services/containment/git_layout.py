"""Git's folder layout as a sandbox's grants need it, read from git's own files without starting git:
a tree's git folder and the common one, the linked worktrees git records, the branches beside a
branch in its ref folder, and the remotes the repository's configuration names by a local path.
Stdlib only: the launch reads these before it restricts itself."""

from __future__ import annotations

import os

__all__ = ["GitLayout", "branches_beside", "git_layout", "read_marker", "remote_paths"]


def read_marker(path: str, limit: int = 4096) -> str:
    """A small file git keeps (bounded, never through a link at its last step); empty when unreadable."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return ""
    try:
        return os.read(fd, limit).decode("utf-8", "surrogateescape").strip()
    except OSError:
        return ""
    finally:
        os.close(fd)


class GitLayout:
    """A tree's git folders, read from its ``.git`` entry without starting git; every linked worktree
    git records."""

    __slots__ = ("common", "gitdir", "worktrees")

    def __init__(self, gitdir: str, common: str, worktrees: tuple[str, ...]) -> None:
        self.gitdir, self.common, self.worktrees = gitdir, common, worktrees

    @property
    def linked(self) -> bool:
        return self.gitdir != self.common


def git_layout(tree: str) -> GitLayout | None:
    """The git folders of the tree ``tree``; None where it holds no ``.git`` git could use."""
    marker = os.path.join(tree, ".git")
    if os.path.isdir(marker) and not os.path.islink(marker):
        gitdir = common = os.path.realpath(marker)
    elif os.path.isfile(marker) and (target := read_marker(marker).removeprefix("gitdir:").strip()):
        gitdir = os.path.realpath(os.path.join(tree, target))
        shared = read_marker(os.path.join(gitdir, "commondir"))
        common = os.path.realpath(os.path.join(gitdir, shared)) if shared else gitdir
    else:
        return None
    found = []
    try:
        names = sorted(os.listdir(os.path.join(common, "worktrees")))[:1000]
    except OSError:
        names = []
    for name in names:
        if where := read_marker(os.path.join(common, "worktrees", name, "gitdir")):
            found.append(os.path.realpath(os.path.dirname(os.path.join(common, "worktrees", name, where))))
    return GitLayout(gitdir, common, tuple(found))


def branches_beside(common: str, branch: list[str]) -> list[str]:
    """The other branches in the branch's ref folder, loose or packed (bounded): the executor that may
    move its branch may move them. Without a folder of its own, that is every branch."""
    folder = "/".join(["refs", "heads", *branch[:-1]])
    found: set[str] = set()
    try:
        with os.scandir(os.path.join(common, folder)) as listing:
            found |= {f"{folder}/{e.name}" for _, e in zip(range(1000), listing, strict=False)}
    except OSError:
        pass
    for line in read_marker(os.path.join(common, "packed-refs"), 1 << 20).splitlines():
        ref = line.partition(" ")[2]
        if ref.startswith(f"{folder}/"):
            found.add(ref)
    own = "/".join(["refs", "heads", *branch])
    return sorted(ref.removeprefix("refs/heads/") for ref in found if ref != own and not ref.endswith(".lock"))


def remote_paths(common: str) -> list[tuple[str, str]]:
    """The remotes the repository's own config names by a local path: (name, resolved path)."""
    import re  # here: only a launch that may push reads the remotes

    found, section = [], ""
    text = read_marker(os.path.join(common, "config"), 256 * 1024)
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("["):
            match = re.fullmatch(r'\[remote\s+"([A-Za-z0-9._-]{1,100})"\]', line)
            section = match.group(1) if match else ""
        elif section and line.split("=", 1)[0].strip().lower() == "url":
            url = line.split("=", 1)[1].strip().strip('"')
            local = url.removeprefix("file://") if url.startswith(("/", "file://")) else ""
            if local:
                found.append((section, os.path.realpath(local)))
    return found

"""Git that reaches a git remote: the one git here with a transport open (every other one has none,
``git_config.ENVIRONMENT``), and so the one that reads no configuration of the repository at all.

The repository's config is the executor's to write: a promisor remote (``extensions.partialClone``)
whose ``uploadpack`` is a command, a ``remote.*.vcs`` helper, an ``ext::`` URL. So a fetch or
``ls-remote`` runs in a git directory made for it alone (``_Private``): a config of ours, the
repository's object store as its own (``GIT_OBJECT_DIRECTORY``: fetched objects land there), and, for a
fetch, a copy of the repository's refs, so that it asks only for what is missing. The repository
gives only the remote's URL (``git remote get-url``, which applies ``url.*.insteadOf`` and reaches
nothing). Git reaches it through the transport that URL needs and no other: ``file`` for a path (the
``git-upload-pack`` it starts in that repository, which the executor may write too, gets no
transport and no lazy fetch), else ``ssh``, ``https`` or ``http`` (a helper, ``ext::``, ``git://``:
never). A URL read wrongly here opens the wrong transport, which git then refuses: never a wider one.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from types import TracebackType

from handoff_core.errors import GitError
from handoff_core.files import git_process
from handoff_core.files.git_config import PROTOCOLS, small_file

__all__ = ["fetch_branch", "remote_refs", "remote_tip"]

_LOCAL_UPLOAD_PACK = "GIT_ALLOW_PROTOCOL= GIT_NO_LAZY_FETCH=1 git-upload-pack"  # a shell command: git runs it so
_REF_LINE = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})? refs/[^\0\n ]+")
_HEAD = "refs/heads/handoff-remote"  # the private directory's HEAD: never fetched into


def _local(url: str) -> bool:
    """Whether git reaches ``url`` through its ``file`` transport, as ``connect.c`` tells: ``file://``,
    or no ``scheme://`` nor ``helper::`` and no colon before the first slash (``host:path`` is ssh)."""
    if url.startswith("file://"):
        return True
    if "://" in url or "::" in url:
        return False
    colon, slash = url.find(":"), url.find("/")
    return colon < 0 or 0 <= slash < colon


def _transport(url: str) -> tuple[str, str]:
    """(``GIT_ALLOW_PROTOCOL``, ``--upload-pack``) for ``url``: the one transport it needs."""
    if _local(url):
        return "file", _LOCAL_UPLOAD_PACK
    return ":".join(name for name in PROTOCOLS if name != "file"), "git-upload-pack"


class _Private:
    """A git directory made for one reaching git (removed after): ``keep`` runs git there, on the
    repository's objects, with the transport ``url`` needs; with ``refs``, the repository's refs are
    its own (the packed refs: a fetch then asks only for what is missing)."""

    def __init__(self, cwd: Path, remote: str, refs: bool = False) -> None:
        asked = [
            git_process.start(cwd, "remote", "get-url", "--", remote),
            git_process.start(cwd, "rev-parse", "--path-format=absolute", "--git-common-dir", "--show-object-format"),
            *([git_process.start(cwd, "for-each-ref", "--format=%(objectname) %(refname)")] if refs else []),
        ]
        (_, url), (_, where), *listed = git_process.results(*asked)
        self.url = url.decode("utf-8", "surrogateescape").rstrip("\n")
        self.common, _, self.form = where.decode("utf-8", "surrogateescape").rstrip("\n").rpartition("\n")
        if self.form not in ("sha1", "sha256"):
            raise GitError(f"git names an object format {self.form[:40]!r} in {cwd} that is not known here")
        found = listed[0][1].decode("utf-8", "surrogateescape").splitlines() if listed else []
        self.refs = [line for line in found if _REF_LINE.fullmatch(line)]  # what a fetch says it has

    def __enter__(self) -> _Private:
        self.folder = tempfile.TemporaryDirectory(prefix="handoff-remote-")
        try:
            self._fill(self.folder.name)
        except BaseException:
            self.folder.cleanup()
            raise
        allowed, self.upload_pack = _transport(self.url)
        objects = os.path.join(self.common, "objects")
        self.keep = {"GIT_DIR": self.folder.name, "GIT_OBJECT_DIRECTORY": objects, "GIT_ALLOW_PROTOCOL": allowed}
        return self

    def _fill(self, root: str) -> None:
        for name in ("objects", "refs"):
            os.mkdir(os.path.join(root, name))
        _write(os.path.join(root, "HEAD"), f"ref: {_HEAD}\n".encode())
        config = f"[core]\n\trepositoryformatversion = 1\n\tbare = true\n[extensions]\n\tobjectFormat = {self.form}\n"
        _write(os.path.join(root, "config"), config.encode())
        shallow = small_file(os.fsencode(os.path.join(self.common, "shallow")), absent=b"")
        if shallow:  # a shallow repository's boundary, so that no fetch walks past it
            _write(os.path.join(root, "shallow"), shallow)
        _write(os.path.join(root, "packed-refs"), "".join(f"{line}\n" for line in self.refs).encode())

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.folder.cleanup()


def _write(path: str, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def remote_tip(cwd: Path, remote: str, branch: str) -> str | None:
    """The commit ``branch`` points at on ``remote`` now (one ``ls-remote``), or None when it has no such branch."""
    with _Private(cwd, remote) as private:
        wanted = f"refs/heads/{branch}"
        args = ("ls-remote", f"--upload-pack={private.upload_pack}", "--heads", "--", private.url, wanted)
        _, out = git_process.run(cwd, *args, keep=private.keep)
    tips = [line.split("\t", 1) for line in out.decode("utf-8", "replace").splitlines()]
    return next((sha for sha, name in tips if name == wanted), None)


def fetch_branch(cwd: Path, remote: str, branch: str, into: str) -> str | None:
    """Fetch ``branch`` of ``remote`` into the repository's private ref ``into`` (that one ref, no tags, no
    submodules); its tip, or None when the remote has no such branch or cannot be reached."""
    with _Private(cwd, remote, refs=True) as private:
        code, _ = git_process.run(
            cwd, "fetch", f"--upload-pack={private.upload_pack}", "--no-tags", "--no-recurse-submodules",
            "--no-write-fetch-head", "--quiet", "--", private.url, f"+refs/heads/{branch}:{into}",
            ok=(0, 128), keep=private.keep,
        )  # fmt: skip
        if code != 0:
            return None
        _, out = git_process.run(
            cwd, "rev-parse", "--verify", "--end-of-options", f"{into}^{{commit}}", keep=private.keep
        )
    tip = out.decode().strip()
    git_process.run(cwd, "update-ref", "--no-deref", into, tip)  # the repository's own ref: its objects stay reachable
    return tip


def remote_refs(cwd: Path, remote: str) -> list[tuple[str, str]]:
    """Every branch and tag ``remote`` holds now, ``(object id, ref name)`` (one ``ls-remote``, which
    reads no configuration of the repository). Raises ``GitError`` when it cannot be asked."""
    with _Private(cwd, remote) as private:
        args = ("ls-remote", f"--upload-pack={private.upload_pack}", "--heads", "--tags", "--", private.url)
        _, out = git_process.run(cwd, *args, keep=private.keep)
    found = [line.split("\t", 1) for line in out.decode("utf-8", "surrogateescape").splitlines()]
    return [(sha, name) for sha, name in (pair for pair in found if len(pair) == 2)]  # noqa: PLR2004

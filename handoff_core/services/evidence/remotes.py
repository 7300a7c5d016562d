"""The git remotes of a task's repository, and which of its commits reached one: each remote asked
once per batch of audits (``RemoteAnswers``, by ``git_remote.remote_refs``), and a repository that
plainly has none read as such from its config files, no git asked (``remote_names``)."""

from __future__ import annotations

import os
from pathlib import Path

from handoff_core.errors import GitError
from handoff_core.files import git_process, git_remote
from handoff_core.files.git_config import git_dirs, silent_config

__all__ = ["MAX_REMOTES", "MAX_REMOTE_REFS", "RemoteAnswers", "reached", "remote_names"]

MAX_REMOTES = 8  # remotes asked per audit; a repository with more leaves pushes undecided
MAX_REMOTE_REFS = 20_000  # refs of one remote compared (each an argument to one git)


class RemoteAnswers:
    """The refs each git remote answered, asked once per batch of audits (a status page)."""

    def __init__(self) -> None:
        self._asked: dict[tuple[str, str], list[tuple[str, str]] | GitError] = {}

    def refs(self, top: Path, remote: str) -> list[tuple[str, str]]:
        key = (str(top), remote)
        if key not in self._asked:
            try:
                self._asked[key] = git_remote.remote_refs(top, remote)
            except GitError as exc:
                self._asked[key] = exc
        found = self._asked[key]
        if isinstance(found, GitError):
            raise found
        return found


def remote_names(top: Path) -> list[str] | None:
    """The repository's git remotes when it plainly has none — its config files read here
    (``git_config.silent_config``: no include) and none names a remote, no legacy ``remotes`` or
    ``branches`` file — an empty list; None whenever unsure: ``git remote`` is asked."""
    found = silent_config(os.fsencode(top))
    if found is None or any(b"remote" in data.lower() for data in found[1:]):
        return None
    dirs = git_dirs(os.fsencode(top))
    if dirs is None:
        return None
    for folder in {os.path.join(d, name) for d in dirs for name in (b"remotes", b"branches")}:
        try:
            if os.listdir(folder):
                return None
        except FileNotFoundError:
            continue
        except OSError:
            return None
    return []


def reached(
    top: Path, mine: list[str], remotes: list[str], asked: RemoteAnswers, exempt: tuple[str, str] = ("", "")
) -> tuple[list[tuple[str, int, str]], str]:
    """Each remote a branch or tag of which holds a commit of ``mine`` now (``exempt``: a remote's ref
    the TASK names): (remote, how many, the refs named), and why the rest is undecided ("" if nothing is)."""
    if not mine:
        return [], ""
    if len(remotes) > MAX_REMOTES:
        return [], f"the repository has over {MAX_REMOTES} git remotes: what reached them is not judged"
    found: list[tuple[str, int, str]] = []
    for remote in remotes:
        try:
            refs = [(sha, name) for sha, name in asked.refs(top, remote) if (remote, name) != exempt]
        except GitError as exc:
            said = (
                f"the git remote {remote} cannot be asked what reached it ({exc.message}); a push there is not judged"
            )
            return found, said
        if len(refs) > MAX_REMOTE_REFS:
            return found, f"the git remote {remote} holds over {MAX_REMOTE_REFS} refs: not judged"
        if not refs:
            continue
        out = git_process.run(top, "rev-list", "--ignore-missing", *mine, "--not", *(sha for sha, _ in refs))[1]
        unreached = set(out.decode().split())
        if hits := [sha for sha in mine if sha not in unreached]:
            names = [name for sha, name in refs if sha in hits][:3]
            found.append((remote, len(hits), ", ".join(names) if names else "under a branch or tag"))
    return found, ""

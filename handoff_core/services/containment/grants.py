"""What a task's sandboxed executor may write, drawn from its published TASK alone.

The kernel's rules are coarser than a glob: a rule on a folder covers everything beneath it. So the
sandbox grants the *literal folder* of each glob the task may write (``src/a1`` for ``src/a1/**``,
``docs`` for ``docs/hello.txt``), and the guard and the audit stay glob-exact inside it. A literal
folder that holds something no executor may touch (git's folder, the state root, another task's
worktree: the tree's root, for a start) is never granted whole: its other entries are, one by one,
and nothing new can be made directly in it; the notes say so. What is never writable, whatever a TASK
says: the tree's ``.git`` (a worktree's names the git folder git reads there), git's configuration,
hooks and info (its whole folder, unless the TASK authorises a commit, which opens its objects, the
worktree's own git folder and the branch's ref folder), the state root, other worktrees, the user's
home (the executor has one of its own).

Reads are allowed everywhere but the Lead's secret, the agent CLIs' records of other sessions (the
user's own, other executors' homes), and, unless the TASK authorises a push, the user's push
credentials; without push, TCP connects only reach the ports ``endpoints`` names.
"""

from __future__ import annotations

import os

from handoff_core.files.executor_home import codex_source
from handoff_core.layout import INDEX_ACTIONS
from handoff_core.services.containment.endpoints import codex_endpoints, connect_ports
from handoff_core.services.containment.git_layout import (
    GitLayout,
    branches_beside,
    git_layout,
    read_marker,
    remote_paths,
)
from handoff_core.services.rules.scope_rule import ScopeRule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from handoff_core.files.executor_home import ExecutorHome
    from handoff_core.services.rules.scope_rule import TaskLike

__all__ = ["GIT_ACTIONS", "Grant", "Grants", "draw_grants"]

GIT_ACTIONS = frozenset(INDEX_ACTIONS)
_META = "*?["  # a glob's special characters: a segment holding none is literal
_MAX_ENTRIES = 10_000  # entries of one folder listed to grant them one by one
_DEVICES = ("null", "zero", "full", "random", "urandom", "tty", "ptmx", "pts", "shm")
# The user's push credentials (relative to the user's home): unreadable unless the TASK authorises push.
PUSH_CREDENTIALS = (".ssh", ".git-credentials", ".config/git/credentials", ".config/gh", ".netrc")
CREDENTIAL_VARIABLES = (
    *("SSH_AUTH_SOCK", "SSH_ASKPASS", "GIT_ASKPASS", "GH_TOKEN", "GITHUB_TOKEN"),
    *("GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN", "GITLAB_TOKEN"),
)


# Plain classes, not records: ``collections`` costs every launch milliseconds to import.
class Grant:
    """Write access beneath ``anchor/parts…``: the anchor resolved once, the parts walked by handle
    (never through a link); ``make``: the folders are created first when missing."""

    __slots__ = ("anchor", "make", "parts", "why")

    def __init__(self, anchor: str, parts: tuple[str, ...], why: str, make: bool = False) -> None:
        self.anchor, self.parts, self.why, self.make = anchor, parts, why, make

    @property
    def path(self) -> str:
        return os.path.join(self.anchor, *self.parts)


class Grants:
    """What a launch may write, may not read, may connect to (None: every port), and what it says."""

    __slots__ = ("connect", "drop_env", "notes", "read_denied", "write")

    def __init__(
        self,
        *,
        write: tuple[Grant, ...],
        read_denied: tuple[str, ...],
        connect: tuple[int, ...] | None,
        notes: tuple[str, ...],
        drop_env: tuple[str, ...],
    ) -> None:
        self.write, self.read_denied, self.connect, self.notes, self.drop_env = (
            write, read_denied, connect, notes, drop_env
        )  # fmt: skip


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


class _Drawing:
    """One drawing of the grants: what is protected, and what has been granted and noted so far."""

    def __init__(self, tree: str, protected: dict[str, str]) -> None:
        self.tree, self.protected = tree, protected
        self.write: list[Grant] = []
        self.notes: list[str] = []

    def holds(self, folder: str) -> list[str]:
        return [what for path, what in self.protected.items() if _inside(path, folder)]

    def within(self, path: str) -> str | None:
        return next((what for folder, what in self.protected.items() if _inside(path, folder)), None)

    def glob(self, glob: str) -> None:
        segments = glob.split("/")
        literal = 0
        while literal < len(segments) and not any(char in segments[literal] for char in _META):
            literal += 1
        folder = segments[: min(literal, len(segments) - 1)]
        path = os.path.join(self.tree, *folder)
        if (what := self.within(path)) is not None:
            self.notes.append(f"{glob}: lies in {what}, which the sandbox never opens for writing")
        elif held := self.holds(path):
            self._one_by_one(tuple(folder), segments[len(folder) :], glob)
            shown = "/".join(folder) or "the tree's root"
            self.notes.append(
                f"{glob}: {shown} also holds {', '.join(sorted(set(held)))}, so it is not writable whole: its other "
                "entries are, one by one, and nothing new can be made directly in it (use a folder of its own)"
            )
        else:
            self.write.append(Grant(self.tree, tuple(folder), f"writable {glob}", make=True))

    def _one_by_one(self, folder: tuple[str, ...], rest: list[str], glob: str) -> None:
        import re  # here: only a glob whose folder holds something protected is matched entry by entry

        from handoff_core.contract.globs import glob_regex

        where = os.path.join(self.tree, *folder)
        try:
            with os.scandir(where) as listing:
                entries = sorted((entry for _, entry in zip(range(_MAX_ENTRIES), listing, strict=False)), key=str)
        except OSError:
            return
        whole = re.compile(glob_regex(glob))
        for entry in entries:
            full, parts = os.path.join(where, entry.name), (*folder, entry.name)
            if entry.is_symlink() or self.within(full) is not None:
                continue
            if entry.is_dir(follow_symlinks=False):
                deeper = rest if rest[0] == "**" else rest[1:]
                if not deeper or not (rest[0] == "**" or re.fullmatch(glob_regex(rest[0]), entry.name)):
                    continue
                if self.holds(full):
                    self._one_by_one(parts, deeper, glob)
                else:
                    self.write.append(Grant(self.tree, parts, f"writable {glob}"))
            elif whole.fullmatch("/".join(parts)):
                self.write.append(Grant(self.tree, parts, f"writable {glob}"))


def _git_grants(
    drawing: _Drawing, git: GitLayout | None, task: TaskLike, actions: frozenset[str], expected: str | None
) -> None:
    """Git's objects, the worktree's own git folder (index, HEAD) and the branch's ref folders, for a
    TASK that authorises a commit (or another action that writes them) in a worktree of its own."""
    if not actions & GIT_ACTIONS or git is None:
        return
    scope = task.scope
    if scope.remote and not scope.worktree and not git.linked:
        drawing.write.append(Grant(git.common, (), "the clone's git folder (commit, on a branch of the remote)"))
        drawing.notes.append(
            "commit: the executor's own clone keeps its index beside its git configuration and hooks, so all of it "
            "is writable; what reaches the remote is what the Lead's audit judges"
        )
        return
    if not git.linked or not scope.worktree:
        drawing.notes.append(
            "commit: not possible in the sandbox for a task in the main tree (git keeps its index beside its "
            "configuration and hooks); dispatch it with a worktree of its own"
        )
        return
    name = os.path.basename(git.gitdir)
    branch = scope.branch.split("/")
    back = read_marker(os.path.join(git.gitdir, "gitdir"))
    head = read_marker(os.path.join(git.gitdir, "HEAD"))
    if (
        git.gitdir != os.path.join(git.common, "worktrees", name)
        or os.path.realpath(os.path.dirname(os.path.join(git.gitdir, back))) != drawing.tree
        or head != f"ref: refs/heads/{'/'.join(branch)}"
        or (expected is not None and git.common != expected)
    ):
        drawing.notes.append(
            "commit: the worktree's git folder is not the one git keeps for it on the TASK's branch: not opened"
        )
        return
    folders = tuple(branch[:-1])
    drawing.write += [
        Grant(git.common, ("objects",), "git objects (commit)"),
        Grant(git.common, ("worktrees", name), "the worktree's index and HEAD (commit)"),
        Grant(git.common, ("refs", "heads", *folders), f"the branch {'/'.join(branch)} (commit)", make=True),
        Grant(git.common, ("logs", "refs", "heads", *folders), "the branch's reflog (commit)", make=True),
    ]
    if beside := branches_beside(git.common, branch):
        shown = ", ".join(beside[:5]) + (", …" if beside[5:] else "")
        drawing.notes.append(
            f"commit: the ref folder of the branch {'/'.join(branch)} also holds {shown}, which the executor can "
            "move too (the kernel grants a folder, not a file): give each task's branch a folder of its own "
            "(task/<topic>/work)"
        )
    if "stash" in actions:  # refs/stash lies in refs/ itself, beside every branch and tag: refs/ is never opened
        drawing.notes.append("stash: not possible in the sandbox (refs/stash lies beside every branch and tag)")


def _push_grants(drawing: _Drawing, git: GitLayout | None) -> None:
    if git is None:
        return
    for name, path in remote_paths(git.common):
        if drawing.within(path) is None and not drawing.holds(path) and os.path.isdir(path):
            drawing.write.append(Grant(path, (), f"the git remote {name} (push)"))
        drawing.write += [
            Grant(git.common, ("refs", "remotes", name), f"the remote {name}'s tracking refs (push)", make=True),
            Grant(git.common, ("logs", "refs", "remotes", name), "their reflogs (push)", make=True),
        ]


def _session_records(environ: dict[str, str], home: ExecutorHome) -> list[str]:
    """What the agent CLIs keep of other sessions, unreadable: the user's own (a Lead's transcript holds
    every launch line, token included, it was handed) and the other executors' homes."""
    user = environ.get("HOME") or os.path.expanduser("~")
    kept = [environ.get("CLAUDE_CONFIG_DIR") or os.path.join(user, ".claude"), os.path.join(user, ".claude.json")]
    kept += [codex_source(environ), os.path.dirname(home.base)]
    return [os.path.realpath(path) for path in kept if os.path.lexists(path)]


def _drawing(tree: str, project: str, state: str, secret_file: str) -> tuple[_Drawing, GitLayout | None, bool]:
    """What no grant may reach, the tree's git layout, and whether that layout is foreign: a worktree
    whose git folder names another repository than the project's (its commondir rewritten by a launch
    that could commit). Nothing a foreign layout names is trusted; the project's own is protected."""
    git = git_layout(tree)
    main = os.path.join(project, ".git")
    expected = os.path.realpath(main) if os.path.isdir(main) else None
    foreign = git is not None and expected is not None and git.common != expected
    git = git_layout(project) if foreign else git
    protected = {state: "the state root (every TASK and REPORT)"}
    protected[os.path.join(tree, ".git")] = "the tree's git entry (a worktree's names the git folder git reads)"
    if git is not None:
        protected[git.common] = "git's folder (its configuration and hooks)"
        protected |= {wt: "another task's worktree" for wt in git.worktrees if wt != tree}
    protected[os.path.realpath(secret_file)] = "the Lead's secret"
    return _Drawing(tree, protected), git, foreign


def draw_grants(
    task: TaskLike,
    ref: str,
    roots: tuple[str, str],
    secret_file: str,
    home: ExecutorHome,
    environ: dict[str, str],
    authorised: frozenset[str],
    extra_ports: tuple[int, ...] = (),
) -> Grants:
    """The grants of ``task``'s executor; ``roots`` are the project and state roots (resolved)."""
    project, state = roots
    rule = ScopeRule(task, ref, project, state)
    drawing, git, foreign = _drawing(rule.root_text, project, state, secret_file)
    for glob in rule.allowed:
        drawing.glob(glob)
    push = "push" in authorised
    if foreign:
        drawing.notes.append(
            "git: the worktree's git folder names another repository than the project's (its commondir was "
            "rewritten): nothing of git is opened, nor any remote"
        )
    else:
        main = os.path.join(project, ".git")
        _git_grants(drawing, git, task, authorised, os.path.realpath(main) if os.path.isdir(main) else None)
        if push:
            _push_grants(drawing, git)
    drawing.write += [Grant(home.home, (), "the executor's own home and temporary folder", make=True)]
    drawing.write += [Grant("/dev", (device,), "a device a shell needs") for device in _DEVICES]
    user_homes = {environ.get("HOME") or os.path.expanduser("~"), os.path.expanduser("~")}
    denied = [os.path.realpath(secret_file), *_session_records(environ, home)]
    if not push:  # those there now (one made later is unreadable only where it lands in a folder listed below)
        credentials = [os.path.join(os.path.realpath(h), c) for h in sorted(user_homes) for c in PUSH_CREDENTIALS]
        denied += [path for path in credentials if os.path.lexists(path)]
    codex = os.path.join(codex_source(environ), "config.toml")  # the user's: the home's copy is the executor's
    endpoints = tuple(codex_endpoints(read_marker(codex, 256 * 1024))) if os.path.isfile(codex) else ()
    return Grants(
        write=tuple(drawing.write),
        read_denied=tuple(dict.fromkeys(denied)),
        connect=None if push else connect_ports(environ, tuple(task.scope.resources), extra_ports, endpoints),
        notes=tuple(drawing.notes),
        drop_env=() if push else CREDENTIAL_VARIABLES,
    )

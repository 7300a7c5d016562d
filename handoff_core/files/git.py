"""Git as a subprocess, the one way git runs here (a task's evidence, discovery, outbound manifests):
a fixed environment, its own process group, bounded in time and output, ``-z`` output parsed (never
a path quoted or split on spaces).

The environment is the repository's own facts only: no system or global configuration, no hooks,
no pager, no prompt, no external diff or text conversion, ``core.quotePath=false``, no transport and
no lazy fetch, for git and every git it starts (``git_config.ENVIRONMENT``); ``GIT_*`` variables of
the caller (a hook's ``GIT_DIR``/``GIT_INDEX_FILE`` aside, see ``run``) are dropped. The one git
that reaches a remote is ``files.git_remote``'s.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from handoff_core.errors import GitError
from handoff_core.files.git_config import (
    CONFIG_LISTING,
    ENVIRONMENT,
    FIXED,
    USER_LEVEL_DROPPED,
    names_nothing,
    overrides,
    refuse_attributes,
    work_tree_top,
)
from handoff_core.files.submodules import submodule_listing

__all__ = [
    "KEPT",
    "MAX_OUTPUT",
    "TIMEOUT",
    "Change",
    "Evidence",
    "Running",
    "Worktree",
    "changes",
    "dirty_paths",
    "evidence",
    "is_ancestor",
    "on_remote",
    "planted",
    "remotes",
    "results",
    "rev_parse",
    "run",
    "staged_paths",
    "start",
    "toplevel",
    "work_tree_of",
    "worktrees",
]

TIMEOUT = 20.0
MAX_OUTPUT = 64 * 1024 * 1024
_NO_SUCH_COMMIT = 128  # git merge-base --is-ancestor: a name that is no commit (0 yes, 1 no)
_CONFIG = tuple(arg for key, value in FIXED for arg in ("-c", f"{key}={value}"))
_USER_CONFIG = tuple(arg for key, value in FIXED if key not in USER_LEVEL_DROPPED for arg in ("-c", f"{key}={value}"))
_NAMING = ("status", "diff", "diff-files", "diff-index", "ls-files", "update-index")
KEPT = ("GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES")


class Change(NamedTuple):
    status: str  # A, C, D, M, R, T, U, X (git's letters; ? for untracked)
    path: str
    old_path: str | None = None  # the other side of a rename or copy


class Worktree(NamedTuple):
    path: str
    head: str | None
    branch: str | None  # refs/heads/NAME, None when detached or bare


def _environment(keep: Mapping[str, str] | None, user_config: bool = False) -> dict[str, str]:
    """The fixed environment; with ``user_config`` the caller's configuration levels stay (system,
    global, ``GIT_CONFIG_*``): to ask where git itself will look, as the user's own git would."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or (user_config and "_CONFIG" in k)}
    env |= {k: v for k, v in ENVIRONMENT.items() if not (user_config and "_CONFIG" in k)}
    return env | {"GIT_PAGER": "cat", "PAGER": "cat"} | dict(keep or {})


class Running:
    """A git process started by ``start``; ``result`` reads it (bounded) and reaps it."""

    def __init__(self, cwd: Path, args: tuple[str, ...], ok: tuple[int, ...], env: dict[str, str], user_config: bool):
        config = _USER_CONFIG if user_config else _CONFIG
        self.cwd, self.args, self.ok = cwd, args, ok
        self.err = tempfile.TemporaryFile()  # noqa: SIM115 - closed in result()
        try:
            self.process = subprocess.Popen(
                ["git", *config, "--no-pager", *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=self.err, start_new_session=True,
            )  # fmt: skip  # its own process group: a timeout stops whatever git started too (git-daemon, hooks)
        except OSError as exc:
            self.err.close()
            raise GitError(
                f"cannot run git in {cwd}: {exc.strerror}; is git installed and the path a directory?"
            ) from exc

    def result(self) -> tuple[int, bytes]:
        process, name = self.process, self.args[0]
        try:
            out = _bounded_read(process)
            code = process.wait()
        finally:
            process.stdout.close() if process.stdout else None
            if process.poll() is None:
                _kill(process)
                process.wait()
        self.err.seek(0)
        message = self.err.read(4096).decode("utf-8", "replace").strip().splitlines()[:1]
        self.err.close()
        if len(out) > MAX_OUTPUT:
            raise GitError(f"git {name} said more than {MAX_OUTPUT} bytes in {self.cwd}; nothing was judged")
        if code < 0:
            raise GitError(f"git {name} was stopped after {TIMEOUT:.0f} s in {self.cwd}; nothing was judged")
        if code not in self.ok:
            raise GitError(f"git {name} failed in {self.cwd}: {(message or ['exit ' + str(code)])[0]}")
        return code, out


def start(
    cwd: Path, *args: str, ok: tuple[int, ...] = (0,), keep: Mapping[str, str] | None = None, user_config: bool = False
) -> Running:
    """``git args`` started in ``cwd``, to be read with ``result``: several may run at once. A command
    that could start a filter first has the drivers the repository's config names neutralised
    (``planted``), unless ``keep`` carries them already."""
    env = _environment(keep, user_config)
    if not user_config and args[:1] and args[0] in _NAMING and "GIT_CONFIG_COUNT" not in env:
        env |= planted(cwd, keep)
    return Running(cwd, args, ok, env, user_config)


def planted(cwd: Path, keep: Mapping[str, str] | None = None, inner: bytes = b"") -> dict[str, str]:
    """Configuration that overrules each filter driver the repository's config names
    (``git_config.overrides``), from one ``git config --get-regexp`` (which runs nothing it reads) —
    spared when the config files git reads at ``cwd`` are read in place and name none
    (``names_nothing``; never under a kept ``GIT_DIR``, which git reads instead) — and those of the
    submodules' listings ``inner`` (``submodules.submodule_listing``)."""
    if "GIT_DIR" not in (keep or {}) and names_nothing(str(cwd)):
        return overrides(b"\0" + inner)
    listing = Running(cwd, CONFIG_LISTING, (0, 1), _environment(keep), False)
    return overrides(listing.result()[1] + b"\0" + inner)


def _submodules_planted(tree: Path, fresh: dict[str, str], populated: list[str]) -> dict[str, str]:
    """``planted`` for a command that compares the index ``fresh`` names with the work tree ``tree``:
    a populated gitlink there makes git start a child git in the submodule, which reads its own config.
    The folders of those gitlinks are added to ``populated``."""

    def ask(cwd: str, args: tuple[str, ...], ok: tuple[int, ...]) -> bytes:
        keep = fresh if cwd == str(tree) else {"GIT_WORK_TREE": cwd}
        return Running(Path(cwd), args, ok, _environment(keep), False).result()[1]

    inner = submodule_listing(str(tree), ask, os.fsencode(fresh["GIT_INDEX_FILE"]), populated)
    if inner is None:
        raise GitError(
            f"{tree} has too many submodules (or levels of them) to check the filters their config names; "
            "nothing was judged: remove the extra gitlinks and audit again"
        )
    return planted(tree, inner=inner) if inner.strip(b"\0") else {}


def run(
    cwd: Path, *args: str, ok: tuple[int, ...] = (0,), keep: Mapping[str, str] | None = None, user_config: bool = False
) -> tuple[int, bytes]:
    """``git args`` in ``cwd``: (exit code, stdout); refused when the code is not in ``ok``, on a timeout,
    or past ``MAX_OUTPUT`` bytes. ``keep`` passes chosen ``GIT_*`` variables (a hook runs under them);
    ``user_config`` reads the user's whole configuration, ``core.hooksPath`` in force (to find where
    git runs hooks; only location queries run so, never one that could start a configured command)."""
    return start(cwd, *args, ok=ok, keep=keep, user_config=user_config).result()


def _bounded_read(process: subprocess.Popen[bytes]) -> bytes:
    """Stdout until EOF, at most ``MAX_OUTPUT + 1`` bytes and ``TIMEOUT`` seconds; past either, git is
    killed (a wait on ``select``, not a watchdog thread: a thread costs a millisecond per call)."""
    assert process.stdout is not None
    fd, chunks, size = process.stdout.fileno(), [], 0
    deadline = time.monotonic() + TIMEOUT
    while size <= MAX_OUTPUT:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            _kill(process)
            break
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    if size > MAX_OUTPUT:
        _kill(process)
    return b"".join(chunks)


def _kill(process: subprocess.Popen[bytes]) -> None:
    """Stop git and every process it started (its group, led by git: ``start_new_session``)."""
    with contextlib.suppress(ProcessLookupError):  # the whole group is gone already
        os.killpg(process.pid, signal.SIGKILL)


def _fields(out: bytes) -> list[str]:
    return [part.decode("utf-8", "surrogateescape") for part in out.split(b"\0")[:-1]]


def _name_status(out: bytes) -> list[Change]:
    """``--name-status -z`` records: a status, then one path, or two for a rename or copy (old, new)."""
    fields, found, index = _fields(out), [], 0
    while index + 1 < len(fields):
        status = fields[index][:1]
        if status in ("R", "C") and index + 2 < len(fields):
            found.append(Change(status, fields[index + 2], fields[index + 1]))
            index += 3
        else:
            found.append(Change(status, fields[index + 1]))
            index += 2
    return found


def work_tree_of(path: Path) -> Path | None:
    """The top of the work tree ``path`` lies in — the nearest folder holding ``.git`` — found by a stat
    per level, no git process: a dispatch outside any repository pays nothing for the evidence."""
    top = work_tree_top(str(path))
    return None if top is None else Path(top)


def toplevel(cwd: Path) -> Path | None:
    """The work tree ``cwd`` lies in, or None outside any repository."""
    code, out = run(cwd, "rev-parse", "--show-toplevel", ok=(0, 128))
    return Path(out.decode("utf-8", "surrogateescape").strip()) if code == 0 else None


def rev_parse(cwd: Path, rev: str) -> str | None:
    """The full object name of the commit ``rev`` names, or None when there is none."""
    code, out = run(cwd, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}", ok=(0, 1, 128))
    return out.decode().strip() if code == 0 else None


def _ancestry(cwd: Path, ancestor: str, descendant: str) -> Running:
    return start(cwd, "merge-base", "--is-ancestor", ancestor, descendant, ok=(0, 1, _NO_SUCH_COMMIT))


def _descends(code: int) -> bool | None:
    return None if code == _NO_SUCH_COMMIT else code == 0


def is_ancestor(cwd: Path, ancestor: str, descendant: str) -> bool | None:
    """Whether ``descendant`` descends from ``ancestor``; None when either is not a commit here."""
    return _descends(_ancestry(cwd, ancestor, descendant).result()[0])


def worktrees(cwd: Path) -> list[Worktree]:
    """Every work tree of the repository ``cwd`` belongs to, the main one first."""
    _, out = run(cwd, "worktree", "list", "--porcelain", "-z")
    found: list[Worktree] = []
    record: dict[str, str] = {}
    for field in [*_fields(out), ""]:
        if field:
            key, _, value = field.partition(" ")
            record[key] = value
        elif record:
            branch = record.get("branch")
            found.append(Worktree(record.get("worktree", ""), record.get("HEAD"), branch))
            record = {}
    return found


_DIFF = ("diff", "--name-status", "-z", "-M", "--no-ext-diff", "--no-textconv", "--ignore-submodules=none")


def changes(cwd: Path, base: str, checkpoint: str) -> list[Change]:
    """Every path changed from ``base`` to ``checkpoint``: renames and copies with both sides, deletions,
    mode and submodule changes (``git diff --name-status``, nothing ignored)."""
    return _name_status(start(cwd, *_DIFF, base, checkpoint, "--").result()[1])


_READ = ("--name-status", "-z", "--no-ext-diff", "--no-textconv", "--ignore-submodules=none", "--no-relative")


def results(*running: Running) -> list[tuple[int, bytes]]:
    """Each one's result; every process is reaped even when one fails (its error is raised then)."""
    outs, failed = [], None
    for one in running:
        try:
            outs.append(one.result())
        except GitError as exc:
            failed = failed or exc
    if failed is not None:
        raise failed
    return outs


def _work_tree_state(tree: Path, head: str | None, keep: dict[str, str]) -> list[Change]:
    """What differs from ``head`` in the work tree ``tree``, one change a path: staged (the index's blob
    ids against ``head``), then unstaged and untracked, both read against a throwaway index made from
    ``head`` — every tracked file is hashed, nothing of the index's own is trusted (stat data,
    assume-unchanged, skip-worktree, fsmonitor state, untracked cache). Only ``.gitignore`` files
    hide an untracked path (not ``info/exclude``). A populated submodule is read the same way, on its
    own (``_submodule_changed``): its index could hide a change inside it from the child git."""
    since = [head] if head else []
    populated: list[str] = []
    common = run(tree, "rev-parse", "--path-format=absolute", "--git-common-dir", keep=keep)[1].rstrip(b"\n")
    refuse_attributes(common)
    with tempfile.TemporaryDirectory(prefix="handoff-index-") as folder:
        fresh = keep | {"GIT_INDEX_FILE": os.path.join(folder, "index")}
        run(tree, "read-tree", *(since or ["--empty"]), keep=fresh)
        fresh |= _submodules_planted(tree, fresh, populated)
        started = (
            start(tree, "diff", "--cached", *_READ, "-M", *since, "--", keep=keep),
            start(tree, "ls-files", "-z", "--others", "--exclude-per-directory=.gitignore", keep=fresh),
        )
        try:  # the refresh hashes each file and records its stat in the throwaway index: the cheapest way
            run(tree, "update-index", "-q", "--refresh", keep=fresh, ok=(0, 1))
            unstaged = run(tree, "diff-files", *_READ, "--", keep=fresh)[1]
        finally:
            (_, staged), (_, untracked) = results(*started)
    found: dict[str, Change] = {}
    for change in [*_name_status(staged), *_name_status(unstaged), *(Change("?", p) for p in _fields(untracked))]:
        found.setdefault(change.path, change)
    for sub in populated:
        path = os.path.relpath(sub, tree)
        if path not in found and _submodule_changed(Path(sub)):
            found[path] = Change("M", path)
    return sorted(found.values(), key=lambda change: change.path)


def _submodule_changed(sub: Path) -> bool:
    """Whether the populated submodule ``sub`` differs from its own ``HEAD``, read as the audit reads a
    work tree (``_work_tree_state``, its submodules in turn): the child git that compares its gitlink
    trusts the submodule's index (``--assume-unchanged``, ``--skip-worktree``, stat data) and its
    ``info/attributes``. Their count and depth are bounded by the walk that found them."""
    keep = {"GIT_WORK_TREE": str(sub)}
    head = _commit(run(sub, "rev-parse", "--verify", "--quiet", "HEAD", ok=(0, 1, 128), keep=keep))
    return bool(_work_tree_state(sub, head, planted(sub, keep) | keep))


def _reading(cwd: Path) -> tuple[Path, Running]:
    """The work tree ``cwd`` lies in — the folder holding ``.git``: git is told so by ``GIT_WORK_TREE``,
    whatever a ``core.worktree`` says — and its ``HEAD`` being read."""
    tree = work_tree_of(cwd) or cwd
    return tree, start(tree, "rev-parse", "--verify", "--quiet", "HEAD", ok=(0, 1, 128))


def _commit(result: tuple[int, bytes]) -> str | None:
    return result[1].decode().strip() if result[0] == 0 else None


def dirty_paths(cwd: Path) -> list[Change]:
    """What is uncommitted or untracked in the work tree (ignored files aside), both sides of a staged rename."""
    tree, head = _reading(cwd)
    try:
        keep = planted(tree) | {"GIT_WORK_TREE": str(tree)}
    finally:
        now = _commit(head.result())
    return _work_tree_state(tree, now, keep)


class Evidence(NamedTuple):
    descends: bool | None  # None: the base or the checkpoint is not a commit here
    changes: list[Change]
    dirty: list[Change]
    head: str | None = None  # the work tree's HEAD commit now


def evidence(cwd: Path, base: str, checkpoint: str) -> Evidence:
    """Ancestry, the change from base to checkpoint, the work tree's HEAD and what differs from it;
    git processes run at once where they can (an audit waits for the slowest, not for their sum)."""
    tree, head = _reading(cwd)
    started = (head, _ancestry(cwd, base, checkpoint), start(cwd, *_DIFF, base, checkpoint, "--", ok=(0, 128)))
    try:
        keep = planted(tree) | {"GIT_WORK_TREE": str(tree)}
    finally:
        now, (code, _), (diff_code, diff) = results(*started)
    dirty = _work_tree_state(tree, _commit(now), keep)
    if _descends(code) is not True or diff_code != 0:
        return Evidence(_descends(code), [], dirty, _commit(now))
    return Evidence(True, _name_status(diff), dirty, _commit(now))


def staged_paths(cwd: Path, keep: Mapping[str, str] | None = None) -> list[Change]:
    """What the next commit would change against HEAD (the index), for a pre-commit hook; with no commit
    yet (an unborn branch), ``git diff --cached`` shows every staged path."""
    _, out = run(cwd, "diff", "--cached", "--name-status", "-z", "-M", "--no-ext-diff", "--", keep=keep)
    return _name_status(out)


def remotes(cwd: Path) -> list[str]:
    """The names of the repository's git remotes."""
    return [name for name in run(cwd, "remote")[1].decode("utf-8", "replace").splitlines() if name]


def on_remote(cwd: Path, remote: str, commit: str) -> bool:
    """Whether a remote-tracking branch of ``remote`` (as last fetched) holds ``commit``."""
    _, out = run(
        cwd, "for-each-ref", "--count=1", f"--contains={commit}", "--format=%(refname)", f"refs/remotes/{remote}/"
    )
    return bool(out.strip())

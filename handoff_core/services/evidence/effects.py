"""What a task did with git besides its files, read from git's own records and judged against the
actions its TASK authorises (``task_pin.actions_in_effect``, the one home of that answer): a commit
made by any command (``{ git commit; }``, an alias, ``commit-tree`` and ``update-ref``, a script) is
a commit all the same.

Read soundly, as git holds it now, by the Lead's git (which runs nothing the repository names):

- the commits on the task's branch from its base, base to checkpoint (a ``current`` task: on
  ``HEAD`` since its base), each an object: one parent needs ``commit``, two ``merge``;
- a worktree's ``HEAD`` on the task's branch (else ``switch-branch``), and the branch's tip;
- what reached each git remote of the repository, asked now (``git_remote.remote_refs``): a commit
  of the task that no local branch or tag but the task's own holds, found under a branch or tag of
  a remote, needs ``push``. A remote that cannot be asked leaves the verdict short of ``passed``.

Evidence only (files the executor's git writes; an executor outside the sandbox can rewrite or
delete each, and a sandboxed one with ``commit`` writes its worktree's): the reflog of the tree's
``HEAD`` after it reached the base (a commit, merge, rebase or switch, even one undone since), and
of the stash (an entry made on a commit of the task). A finding there is reported as the record it
is; its absence proves nothing.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from handoff_core.errors import GitError
from handoff_core.files import git, git_process, git_records
from handoff_core.files.git_config import git_dirs
from handoff_core.services.evidence.remotes import RemoteAnswers, reached, remote_names

__all__ = [
    "Effects",
    "RemoteAnswers",
    "crossed",
    "current_effects",
    "pushed_effects",
    "worktree_effects",
]

EVIDENCE = "the executor's git wrote this record: evidence, whose absence would prove nothing"
# A reflog message's command, as git writes it (GIT_REFLOG_ACTION can rename it: evidence), and the action.
_KINDS = (
    ("commit (merge)", "merge"),
    ("commit", "commit"),
    ("merge ", "merge"),
    ("pull --rebase", "rebase"),
    ("pull", "merge"),
    ("rebase", "rebase"),
    ("cherry-pick", "commit"),
    ("revert", "commit"),
    ("am", "commit"),
)
_MOVES = ("switch-branch", "reset-hard", "rebase")  # what may move HEAD to an unrelated commit


class Effects(NamedTuple):
    violations: list[tuple[str, str]]  # (what, why)
    notes: list[str]  # "what: why" for what could not be read (the audit's not_judged)
    undecided: str = ""  # why the verdict cannot be passed; "" when nothing was left undecided
    others: tuple[tuple[str, str], ...] = ()  # (path in the task's tree, the task whose command wrote it)


def _few(shas: list[str]) -> str:
    return ", ".join(sha[:12] for sha in shas[:3]) + (" …" if len(shas) > 3 else "")  # noqa: PLR2004


def _not_authorised(action: str) -> str:
    return f"a {action}, which the TASK does not authorise"


def _lines(out: bytes) -> list[list[str]]:
    return [line.split() for line in out.decode().splitlines() if line]


def _rev_list(top: Path, *args: str) -> list[list[str]]:
    return _lines(git_process.run(top, "rev-list", "--parents", *args)[1])


def _commits(lines: list[list[str]], what: str, where: str, allowed: frozenset[str]) -> list[tuple[str, str]]:
    """The commits ``lines`` (``rev-list --parents``) judged: one parent (or none) needs commit, more merge."""
    plain = [line[0] for line in lines if len(line) <= 2]  # noqa: PLR2004 - a commit and its one parent (or none)
    merges = [line[0] for line in lines if len(line) > 2]  # noqa: PLR2004
    found = []
    if plain and "commit" not in allowed:
        found.append((what, f"{len(plain)} commit(s) {where} ({_few(plain)}): {_not_authorised('commit')}"))
    if merges and "merge" not in allowed:
        found.append((what, f"{len(merges)} merge commit(s) {where} ({_few(merges)}): {_not_authorised('merge')}"))
    return found


def _shown(found: list[tuple[str, str]]) -> set[str]:
    """The actions ``found`` names already: the reflog does not repeat them."""
    kinds = ("commit", "merge", "switch-branch")
    return {kind for _, why in found for kind in kinds if _not_authorised(kind) in why}


def _kind(message: str) -> str | None:
    if message.startswith("checkout: moving from "):
        moved = message.removeprefix("checkout: moving from ").split(" to ", 1)
        return "switch-branch" if len(moved) == 2 and moved[0] != moved[1] else None  # noqa: PLR2004
    return next((action for prefix, action in _KINDS if message.startswith(prefix)), None)


def _parents(top: Path, shas: list[str]) -> dict[str, list[str]]:
    """Each commit of ``shas`` git still holds, with its parents (one git, none for no commit)."""
    if not shas:
        return {}
    lines = _rev_list(top, "--no-walk=unsorted", "--ignore-missing", *dict.fromkeys(shas))
    return {line[0]: line[1:] for line in lines}


def _moved(entry: git_records.ReflogEntry, parents: dict[str, list[str]], allowed: frozenset[str]) -> str | None:
    """Why a reflog entry that names no command (``update-ref``, ``symbolic-ref``) is a finding."""
    if entry.new == entry.old:
        return None
    if entry.old in parents.get(entry.new, []):
        return None if "commit" in allowed else f"a commit made without `git commit` ({_not_authorised('commit')})"
    if any(action in allowed for action in _MOVES):
        return None
    return "a switch, reset or rebase made without naming one, none of which the TASK authorises"


def _unnamed(entry: git_records.ReflogEntry) -> bool:
    return _kind(entry.message) is None and not entry.message.startswith("reset: ")


def _since(entries: list[git_records.ReflogEntry] | None, base: str) -> list[git_records.ReflogEntry] | str:
    """The entries after the one that brought ``HEAD`` to ``base`` (all, with no base), or why none are read."""
    if entries is None:
        return "reflog of HEAD: not a plain file, not read"
    start = 0 if not base else next((i + 1 for i, e in enumerate(entries) if e.new == base), None)
    if start is None:
        return f"reflog of HEAD: it does not reach back to the base {base[:12]}, so it was not read"
    return entries[start:]


def _evidence(top: Path, dirs: tuple[bytes, bytes], base: str, own: set[str], allowed: frozenset[str],
              shown: set[str]) -> Effects:  # fmt: skip
    """The reflogs of ``HEAD`` (since the base) and of the stash (entries made on a commit of the task,
    ``own``: its first parent), judged as evidence; an action already found soundly is not repeated."""
    head = _since(git_records.reflog(os.path.join(dirs[0], b"logs", b"HEAD")), base)
    stash = git_records.reflog(os.path.join(dirs[1], b"logs", b"refs", b"stash")) or []
    stash = stash if "stash" not in allowed and own else []
    entries = head if isinstance(head, list) else []
    parents = _parents(top, [e.new for e in entries if _unnamed(e)] + [e.new for e in stash])
    found = []
    for entry in entries:
        kind = _kind(entry.message)
        if kind is not None and kind not in allowed and kind not in shown:
            why = _not_authorised(kind)
        elif _unnamed(entry) and "moved" not in shown and (why := _moved(entry, parents, allowed) or ""):
            kind = "moved"
        else:
            continue
        shown.add(kind)
        said = f"`{entry.message[:80]}`" if entry.message else "no command"
        found.append(("reflog of HEAD", f"git's reflog records {said} ({entry.old[:12]} → {entry.new[:12]}): "
                      f"{why} ({EVIDENCE})"))  # fmt: skip
    if made := [e for e in stash if (parents.get(e.new) or [""])[0] in own]:
        why = f"git's stash records `{made[-1].message[:80]}` on a commit of the task: {_not_authorised('stash')}"
        found.append(("refs/stash", f"{why} ({EVIDENCE})"))
    return Effects(found, [head] if isinstance(head, str) else [])


def _reached(
    top: Path, mine: list[str], remotes: list[str], asked: RemoteAnswers, exempt: tuple[str, str] = ("", "")
) -> Effects:
    """Which of the task's commits ``mine`` a branch or tag of a git remote holds now (``remotes.reached``)."""
    found, undecided = reached(top, mine, remotes, asked, exempt)
    said = [(f"remote {name}", f"{count} commit(s) of the task reached the git remote {name} ({under}): "
             + _not_authorised("push")) for name, count, under in found]  # fmt: skip
    return Effects(said, [], undecided)


def _merged(*parts: Effects) -> Effects:
    undecided = next((part.undecided for part in parts if part.undecided), "")
    others = tuple(other for part in parts for other in part.others)
    return Effects([v for p in parts for v in p.violations], [n for p in parts for n in p.notes], undecided, others)


def crossed(done: Effects, state_root: str, project: str, ref: str, root: str) -> Effects:
    """``done`` with the crossings the post-tool hooks recorded (``crossings``): this task's writes in
    another tree (a violation when its command named that tree, else undecided), and the paths of
    its own tree ``root`` another task's command wrote and nobody has written since (``others``)."""
    from handoff_core.services.evidence import crossings

    found, notes, others = [], [], []
    main = os.path.realpath(project)
    for one in crossings.crossings_of(state_root):
        where = "the main tree" if one.tree == main else "another task's worktree"
        if one.ref == ref:
            if one.named:
                why = f"changed in {where} by a command of this task that names that tree (its post-tool's record)"
                found.append((one.where, f"{why}: a task writes only in its own tree, put back since or not"))
            else:
                said = "which does not name that tree (its post-tool's record): it, or another writer then, wrote it"
                notes.append(f"{one.where}: changed in {where} while a command of this task ran, {said}")
        elif one.tree == root and crossings.unchanged(one):
            others.append((one.path, one.ref))
    undecided = "paths in other trees changed while its commands ran (not_judged names them)" if notes else ""
    return _merged(done, Effects(found, notes, undecided, tuple(others)))


def _wave(top: Path, *calls: tuple[str, ...]) -> Callable[[], list[bytes]]:
    """Each git call started at once (an audit waits for the slowest, not their sum); calling the answer
    reads them all, each reaped even when one fails."""
    started = [git_process.start(top, *call[1:], ok=_OK[call[0]]) for call in calls]
    return lambda: [out for _, out in git_process.results(*started)]


_OK = {"must": (0,), "may": (0, 1, 128)}
_DIRS = ("must", "rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir")
_REMOTES = ("must", "remote")


def _dirs(out: bytes) -> tuple[bytes, bytes]:
    git_dir, _, common = out.rstrip(b"\n").partition(b"\n")
    return git_dir, common


def _names(out: bytes) -> list[str]:
    return [name for name in out.decode("utf-8", "replace").splitlines() if name]


def _where(top: Path) -> tuple[tuple[bytes, bytes], str] | None:
    """(git dir, common dir) and the branch ``HEAD`` names ("" when detached), read from the files git
    reads (``git_config.git_dirs``, ``git_records.head_of``): no process. None when unsure: git is asked."""
    dirs = git_dirs(os.fsencode(top))
    head = None if dirs is None else git_records.head_of(dirs[0])
    return None if dirs is None or head is None else (dirs, head.ref or "")


def _tip(common_dir: bytes, own: str, checkpoint: str) -> str | None:
    """The branch's tip read from git's ref files when it is the checkpoint; None (git is asked) else."""
    return checkpoint if git_records.ref_oid(common_dir, own) == checkpoint else None


def _branch_tip(top: Path, own: str) -> str:
    code, out = git_process.run(top, "rev-parse", "--verify", "-q", f"{own}^{{commit}}", ok=_OK["may"])
    return out.decode().strip() if code == 0 else ""


def worktree_effects(
    top: Path, branch: str, base: str, checkpoint: str, allowed: frozenset[str], asked: RemoteAnswers
) -> Callable[[git.Evidence | None], Effects]:
    """A worktree task's git effects: its branch, its ``HEAD``, its reflogs, what reached a remote. Its
    git processes start now; calling the answer with the audit's evidence (its commits from the base to
    the checkpoint, its ``HEAD``) judges what they say. With no remote (``remote_names``) nothing can
    have reached one, and no git is asked which commits only the task holds."""
    own, push = f"refs/heads/{branch}", "push" not in allowed
    tips = ("--ignore-missing", checkpoint, own, "HEAD", "--not", base)
    where = _where(top)
    known = None if where is None else _tip(where[0][1], own, checkpoint)
    remotes = remote_names(top) if push else []
    only = ("must", "rev-list", *tips, f"--exclude={branch}", "--branches", "--tags")
    wave = _wave(
        top,
        *([("may", "rev-parse", "--verify", "-q", f"{own}^{{commit}}")] if known is None else []),
        *([only, _REMOTES] if remotes is None else []),
        *([_DIRS, ("may", "symbolic-ref", "-q", "HEAD")] if where is None else []),
    )  # fmt: skip

    def judge(found: git.Evidence | None) -> Effects:
        outs = wave()
        if found is None or found.descends is not True:
            return Effects([], [])  # the audit says why it judges nothing
        if found.lineage is None:
            raise GitError(f"git rev-list could not list the commits from the base to the checkpoint in {top}")
        at = (_dirs(outs[-2]), outs[-1].decode("utf-8", "replace").strip()) if where is None else where
        # the file's tip stands only for a commit: the checkpoint among the commits git listed
        proven = known is not None and any(line[0] == checkpoint for line in found.lineage)
        asked_tip = outs.pop(0).decode().strip() if known is None else None
        tip = checkpoint if proven else asked_tip if asked_tip is not None else _branch_tip(top, own)
        lines = found.lineage
        # the commits only the branch, HEAD and the checkpoint reach: the lineage's, when both are at it
        reach = lines if tip == found.head == checkpoint else _lines(git_process.run(top, "rev-list", *tips)[1])
        pushed = (outs[0], outs[1]) if remotes is None else None
        return _worktree(top, branch, base, checkpoint, allowed, asked, at, (tip, lines, reach, pushed))

    return judge


def _worktree(top: Path, branch: str, base: str, checkpoint: str, allowed: frozenset[str], asked: RemoteAnswers,
              where: tuple[tuple[bytes, bytes], str],
              said: tuple[str, list[list[str]], list[list[str]], tuple[bytes, bytes] | None]) -> Effects:  # fmt: skip
    own, push = f"refs/heads/{branch}", "push" not in allowed
    head_ref, (tip, lines, reach, pushed) = where[1], said
    found = []
    if head_ref != own and "switch-branch" not in allowed:
        out_name = head_ref.removeprefix("refs/heads/") or "a detached HEAD"
        found.append(("HEAD", f"the worktree has {out_name} checked out, not its branch {branch}: "
                      + _not_authorised("switch-branch")))  # fmt: skip
    if not tip:
        found.append((own, "the task's branch is gone (deleted or renamed): its work is on no branch of its own"))
    elif head_ref != own and tip != checkpoint:
        found.append((own, f"the branch is at {tip}, past the checkpoint: not audited"))
    found += _commits(lines, own, "on the branch since dispatch", allowed)
    mine = {base, *(line[0] for line in reach)}
    parts = [Effects(found, []), _evidence(top, where[0], base, mine, allowed, _shown(found))]
    if push and pushed is not None:
        parts.append(_reached(top, [line[0] for line in _lines(pushed[0])], _names(pushed[1]), asked))
    return _merged(*parts)


def current_effects(top: Path, base: str, head: str | None, allowed: frozenset[str], asked: RemoteAnswers) -> Effects:
    """A ``current`` task's git effects since dispatch, in the shared tree: every commit on ``HEAD``
    since the base is counted, whoever made it."""
    if head is None:
        return Effects([], [])
    push = "push" not in allowed and remote_names(top) != []  # with no remote, nothing reached one
    since = ("must", "rev-list", "--parents", head, *(["--not", base] if base else []))
    local = _where(top)
    outs = _wave(top, since, *([_REMOTES] if push else []), *([_DIRS] if local is None else []))()
    dirs = local[0] if local is not None else _dirs(outs[-1])
    lines = _lines(outs[0])
    where = "on HEAD since dispatch (the tree is shared: the Lead's commits after the REPORT count too)"
    found = _commits(lines, "HEAD", where, allowed)
    mine = {base, *(line[0] for line in lines)} - {""}
    parts = [Effects(found, []), _evidence(top, dirs, base, mine, allowed, _shown(found))]
    if push:
        parts.append(_reached(top, [line[0] for line in lines], _names(outs[1]), asked))
    return _merged(*parts)


def pushed_effects(
    top: Path, branch: str, remote: str, base: str, checkpoint: str, allowed: frozenset[str], asked: RemoteAnswers
) -> Effects:
    """A task whose branch lives on a git remote (fetched): its commits, and, unless it may push, what of
    them reached any ref of a remote but its own branch on its own remote (where the TASK says to push)."""
    push = "push" not in allowed
    mine = ("must", "rev-list", checkpoint, "--not", base, "--branches", "--tags")
    outs = _wave(top, ("must", "rev-list", "--parents", f"{base}..{checkpoint}"), *([mine, _REMOTES] if push else []))()
    parts = [Effects(_commits(_lines(outs[0]), f"refs/heads/{branch}", "on the branch since dispatch", allowed), [])]
    if push:
        own = (remote, f"refs/heads/{branch}")
        parts.append(_reached(top, [line[0] for line in _lines(outs[1])], _names(outs[2]), asked, own))
    return _merged(*parts)

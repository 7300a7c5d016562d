"""A shell command's writes in another tree (the main tree, another task's worktree), blamed on the
task whose command made them, not on the tree's own task.

The pre-tool hook marks when each shell command starts: an empty file, one per tool call
(``tool_use_id``, which both CLIs send), whose change time the kernel sets. The post-tool hook then
reads every other tree of the repository with one ``git status`` each, and keeps the changed paths
whose change time is at or after that mark (a deleted path: its folder's): they changed while the
command ran. It tells the agent at once, and records each one with whether the command's words name
that tree (a path in it, or a working folder in it). A change time only moves forward (a write or a
``touch`` sets it to now; nothing sets it back), so a path whose change time still equals the one
recorded has not been written since.

What is known, and what is not. The kernel's change times are the kernel's; the marks and the
records are files in this user's cache, which an executor outside the sandbox, of the same user,
can delete or forge, as it can its own session log: they are evidence. So a record only ever moves a
verdict away from ``passed``: the writer's audit fails on a command that named the tree, and is
``unknown`` on one that did not (another writer may have written at the same moment: the Lead in the
main tree, the tree's own task); the tree's own audit sets such a path aside, naming the writer, and
is ``unknown`` rather than ``failed`` for it (a path it never wrote is not its violation; its
checkpoint does not hold it either). Inside the sandbox no other tree can be written (the kernel
refuses), and the check is not made. Stdlib only: the hook process imports this.
"""

from __future__ import annotations

import json
import os
import re
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from handoff_core.services.evidence.tree_status import Running
    from handoff_core.services.rules.scope_rule import ScopeRule

__all__ = [
    "MAX_RECORDS",
    "Crossing",
    "crossings_of",
    "mark_start",
    "named_by",
    "record",
    "start_others",
    "started",
    "unchanged",
    "written_since",
]

MAX_RECORDS = 2000  # records read per state root
MAX_TREES = 64  # other trees read after one command; past that, the hook says it cannot tell
_COMMANDS, _CROSSINGS = "commands", "crossings"


def _digest(*parts: str) -> str:
    from handoff_core.contract.digest import sha256_hex

    return sha256_hex("\0".join(parts).encode("utf-8", "surrogateescape"))[:32]


def _cache(*parts: str) -> str:
    from handoff_core.files.executor_home import cache_root

    return os.path.join(cache_root(), *parts)


def _mark(ref: str, session: str, call: str) -> str:
    return _cache(_COMMANDS, _digest(ref), _digest(session, call))


def _call(data: dict[str, object]) -> tuple[str, str]:
    session, call = data.get("session_id"), data.get("tool_use_id")
    return (session if isinstance(session, str) else ""), (call if isinstance(call, str) else "")


def mark_start(ref: str, data: dict[str, object]) -> None:
    """Mark that the shell command of this event starts now (never an error: the post-tool says so)."""
    path = _mark(ref, *_call(data))
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        if os.path.lexists(path):
            os.unlink(path)  # a mark left by a call that never finished: this one starts now
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600))
    except OSError:
        return


def started(ref: str, data: dict[str, object]) -> int | None:
    """When the shell command of this event started (the mark's change time, in ns), the mark removed;
    None when no mark was made."""
    path = _mark(ref, *_call(data))
    try:
        at = os.lstat(path).st_ctime_ns
        os.unlink(path)
    except OSError:
        return None
    return at


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


_REDIRECT = re.compile(r"^[0-9]*(?:&>>|&>|>>|>&|>\||<>|>|<)")


def named_by(command: str, cwd: str, tree: str, own: str) -> bool:
    """Whether the command's words name ``tree`` (not the task's own tree ``own``, which may lie in it):
    a word that is a path there (after a redirection, or an option's ``=``), or a working folder there."""
    import shlex

    def there(path: str) -> bool:
        real = os.path.realpath(path)
        return _inside(real, tree) and not _inside(real, own)

    if there(cwd):
        return True
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    for word in words:
        bare = _REDIRECT.sub("", word)
        for said in {word, bare, bare.split("=", 1)[-1]}:
            if said and there(os.path.join(cwd, os.path.expanduser(said))):
                return True
    return False


class Crossing:
    """A path of another tree that changed while one command of task ``ref`` ran."""

    __slots__ = ("ctime_ns", "named", "path", "ref", "status", "tree")

    def __init__(self, ref: str, tree: str, path: str, status: str, ctime_ns: int, named: bool) -> None:
        self.ref, self.tree, self.path, self.status = ref, tree, path, status
        self.ctime_ns, self.named = ctime_ns, named

    @property
    def where(self) -> str:
        return os.path.join(self.tree, self.path)


def _ctime(path: str) -> int | None:
    """The change time of ``path``, or of its folder when it is gone (a removal changes the folder)."""
    for place in (path, os.path.dirname(path)):
        try:
            return os.lstat(place).st_ctime_ns
        except OSError:
            continue
    return None


def _trees(rule: ScopeRule) -> list[str]:
    return [os.path.realpath(rule.project), *rule.linked_worktrees()]


def start_others(rule: ScopeRule) -> list[tuple[str, Running]]:
    """A ``git status`` started in each other tree of the repository, to run beside the task tree's.
    Raises ``StatusFailed`` when a tree cannot be read, or when there are too many to read (none
    left running)."""
    from handoff_core.services.evidence.tree_status import StatusFailed, start_status

    trees = _trees(rule)
    others = [tree for tree in dict.fromkeys(trees) if tree != rule.root_text and os.path.isdir(tree)]
    if len(others) > MAX_TREES:
        raise StatusFailed(f"the repository has over {MAX_TREES} work trees: their changes were not read")
    running: list[tuple[str, Running]] = []
    try:
        for tree in others:
            running.append((tree, start_status(tree)))
    except BaseException:
        for _, started in running:
            started.drop()
        raise
    return running


def written_since(
    rule: ScopeRule, start: int, command: str, cwd: str, running: list[tuple[str, Running]]
) -> list[Crossing]:
    """Every changed path of another tree (each one's ``git status`` in ``running``, read here) whose
    change time is at or after ``start``. Raises ``StatusFailed`` when a tree cannot be read."""
    trees = _trees(rule)
    found = []
    for tree, started in running:
        named = None
        for status, path in started.paths():
            where = os.path.join(tree, path.rstrip("/"))
            if _inside(where, rule.state) or any(t != tree and _inside(where, t) for t in trees):
                continue  # the handoff tree, or a tree nested in this one: not this tree's path
            if (at := _ctime(where)) is not None and at >= start:
                named = named_by(command, cwd, tree, rule.root_text) if named is None else named
                found.append(Crossing(rule.ref, tree, path.rstrip("/"), status, at, named))
    return found


def _records(state_root: str) -> str:
    return _cache(_CROSSINGS, _digest(os.path.realpath(state_root)))


def record(state_root: str, crossings: list[Crossing]) -> None:
    """Keep each crossing where the Lead's audit reads it (never an error: the agent was told)."""
    folder = _records(state_root)
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
    except OSError:
        return
    for one in crossings:
        fields: dict[str, object] = {"ref": one.ref, "tree": one.tree, "path": one.path, "status": one.status}
        fields |= {"ctime_ns": one.ctime_ns, "named": one.named, "at": time.time()}
        name = os.path.join(folder, _digest(one.ref, one.tree, one.path, str(one.ctime_ns)))
        try:
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except OSError:
            continue  # recorded already, or the cache refuses
        try:
            os.write(fd, json.dumps(fields).encode("utf-8", "surrogateescape"))
        finally:
            os.close(fd)


def _read(path: str) -> Crossing | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        data = os.read(fd, 16384)
        fields = json.loads(data)
        texts = [fields[key] for key in ("ref", "tree", "path", "status")]
        at, named = fields["ctime_ns"], fields["named"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    finally:
        os.close(fd)
    if not (all(isinstance(t, str) for t in texts) and isinstance(at, int) and isinstance(named, bool)):
        return None
    ref, tree, path, status = texts
    return Crossing(ref, tree, path, status, at, named)


def crossings_of(state_root: str) -> list[Crossing]:
    """Every crossing recorded for ``state_root`` (at most ``MAX_RECORDS``)."""
    folder = _records(state_root)
    try:
        names = sorted(os.listdir(folder))[:MAX_RECORDS]
    except OSError:
        return []
    return [one for name in names if (one := _read(os.path.join(folder, name))) is not None]


def unchanged(crossing: Crossing) -> bool:
    """Whether the path still has the change time recorded: nobody wrote it since."""
    return _ctime(crossing.where) == crossing.ctime_ns

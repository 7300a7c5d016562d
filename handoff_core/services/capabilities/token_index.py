"""Which task a report token belongs to, found from the hash each TASK records.

The HTTP team server takes a task's report token as a bearer and must scope the session to that
task. Each TASK.md carries ``sha256`` of its token, so the index maps those hashes to refs. It is
built once, by one walk of the tree; after that it follows the tree as it is told of changes
(``follow``, fed by the server's one watcher, and ``learn``, for a task this server has just
dispatched). A build saves what it took in as rows in this user's cache (``token_rows``), and the
next server's first build reads only the TASKs those rows cannot prove: a stat of each task
instead of a parse of each TASK. Tasks learned after a build are saved by the next one (a rebuild
after lost events, or the next start's, which reads them again). Answering never touches the disk
and takes no lock: a token the index does not know is refused at the cost of one hash and one
dictionary look-up, however many arrive and however large the tree.

A TASK's hash is read by the TASK parser (``task_identity``: ``parse_task`` without the scope
block), from the generated list of its Return section only, and only from a TASK whose own ids
are those of the directory holding it: a line quoted in a Goal, or a copy of another task's
TASK.md, never takes that task's place. A hash that two TASKs record anyway opens neither (which
one is seen first depends on directory order).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from handoff_core.contract.ids import Ref, is_change_id, is_round_id, task_number
from handoff_core.contract.task_file import task_identity
from handoff_core.errors import HandoffError
from handoff_core.files.entries import read_entry
from handoff_core.files.paths import open_dir, walked
from handoff_core.layout import CHANGES, SESSIONS, TASK_FILE, task_parts
from handoff_core.services.capabilities.token_rows import Key, Row, Stamp, load_rows, proven, read_stamp, save_rows
from handoff_core.services.capabilities.tokens import token_check
from handoff_core.services.tree.claim_rows import SETTLED_NS

__all__ = ["TokenIndex"]

# Depths below the state root: specdev/changes/<change>/sessions/<round>/<task>/<file>.
_CHANGE, _ROUND, _TASK = len(CHANGES) + 1, len(CHANGES) + 3, len(CHANGES) + 4
_Found = tuple[tuple[str, ...], list[Ref]]  # a round's parts and tasks in it


def recorded_check(data: bytes, ref: Ref) -> str | None:
    """The token check of the TASK ``data``, when it reads as a TASK and is the one ``ref`` names."""
    try:
        task = task_identity(data.decode("utf-8").removeprefix("\ufeff"))
    except (HandoffError, UnicodeDecodeError):
        return None
    if (task.session, task.task) != (ref.session, ref.task) or task.change not in (None, ref.change):
        return None  # a copy of another task's TASK.md
    return task.token_check


class TokenIndex:
    def __init__(self, state_root: Path, settle_ns: int = SETTLED_NS) -> None:
        self.state_root = state_root
        self.settle_ns = settle_ns  # how far behind the clock a TASK's ctime must be for its row to be kept
        self._refs: dict[str, Ref] = {}
        self._doubled: set[str] = set()  # hashes two TASKs record: they open neither
        self._seen: dict[Key, Row] = {}  # every task whose TASK was taken in, as its row
        self._lock = threading.Lock()  # for writers: a look-up reads one dict, safe without it
        self._kept: dict[Key, object] | None = None  # the last server's rows, while the first build takes them in
        self._unsaved = False
        self.built = False
        self.read = 0  # TASK.md files read and parsed (a row that proves one spares its read)

    def __len__(self) -> int:
        """Tasks whose TASK the index has taken in."""
        return len(self._seen)

    def ref_of(self, token: str) -> Ref | None:
        """The task whose TASK records this token's hash, or None (the index is built on first use)."""
        if not self.built:
            self.build()
        check = token_check(token.strip())
        return None if check in self._doubled else self._refs.get(check)

    def build(self) -> None:
        """Walk the tree and take in every TASK.md not taken in yet (a TASK never changes): once at
        start, and again only when the watcher may have missed events. A TASK the last server's rows
        prove is taken from its row, unread; the rows are saved again when anything changed."""
        with self._lock:
            kept = self._kept = load_rows(self.state_root) if not self.built else {}
            self._take_all(self._tasks_under(CHANGES))
            self._unsaved |= len(kept) != len(self._seen)  # a task gone since, or one more
            self._kept, self.built = None, True
            if self._unsaved:
                self._unsaved = not save_rows(self.state_root, self._seen)

    def learn(self, ref: Ref) -> None:
        """A task this server has just published, known before any watcher reports it."""
        with self._lock:
            self._take_all(self._tasks_under(task_parts(ref.change, ref.session, ref.task)))

    def follow(self, changed: Iterable[tuple[bool, Path]]) -> None:
        """Take in what the watcher saw: ``(gone, path)`` pairs; reads only tasks not yet known."""
        with self._lock:
            for gone, path in changed:
                try:
                    parts = path.relative_to(self.state_root).parts
                except ValueError:
                    continue
                if len(parts) < _CHANGE or parts[: len(CHANGES)] != CHANGES:
                    continue
                if gone:
                    self._forget(parts[:_TASK])
                else:
                    self._take_all(self._tasks_under(parts[:_TASK]))

    def _forget(self, prefix: tuple[str, ...]) -> None:
        """Drop the tasks below a path that is gone (and still gone: an event may be stale)."""
        if os.path.lexists(self.state_root.joinpath(*prefix)):
            return
        below = tuple(prefix[depth - 1] for depth in (_CHANGE, _ROUND, _TASK) if depth <= len(prefix))
        for check, ref in list(self._refs.items()):
            if (ref.change, ref.session, ref.task)[: len(below)] == below:
                del self._refs[check]
        for key in [key for key in self._seen if key[: len(below)] == below]:
            del self._seen[key]
            self._unsaved = True

    def _take_all(self, found: Iterable[_Found]) -> None:
        """Take in each round's tasks not yet known, the round opened once for all of them."""
        for parts, refs in found:
            fresh = [ref for ref in refs if (ref.change, ref.session, ref.task) not in self._seen]
            if not fresh:
                continue
            try:
                with walked(self.state_root, parts) as round_fd:
                    for ref in fresh:
                        self._take(round_fd, ref)
            except (OSError, HandoffError):
                continue  # the round is gone or unsafe: its tasks are looked at again next time

    def _tasks_under(self, prefix: tuple[str, ...]) -> Iterator[_Found]:
        """Every round below ``prefix`` (the changes folder, a change, a round or a task), with its
        tasks (only the one task, for a task's prefix)."""
        if len(prefix) >= _TASK:
            change, sessions, session, task = prefix[len(CHANGES) : _TASK]
            if sessions == SESSIONS and is_change_id(change) and is_round_id(session) and task_number(task) is not None:
                yield prefix[:_ROUND], [Ref(change, session, task)]
            return
        if len(prefix) == _CHANGE + 1:  # the sessions folder itself
            prefix = prefix[:_CHANGE]
        if len(prefix) == _CHANGE - 1:
            for change in self._names(prefix, is_change_id):
                yield from self._tasks_under((*prefix, change))
        elif len(prefix) == _CHANGE:
            for session in self._names((*prefix, SESSIONS), is_round_id):
                yield from self._tasks_under((*prefix, SESSIONS, session))
        elif len(prefix) == _ROUND and prefix[_CHANGE] == SESSIONS:
            change, session = prefix[_CHANGE - 1], prefix[_ROUND - 1]
            tasks = self._names(prefix, lambda name: task_number(name) is not None)
            yield prefix, [Ref(change, session, task) for task in tasks]

    def _names(self, parts: tuple[str, ...], valid: Callable[[str], bool]) -> list[str]:
        try:
            with walked(self.state_root, parts) as fd:
                return [name for name in os.listdir(fd) if valid(name)]
        except (OSError, HandoffError):
            return []

    def _take(self, round_fd: int, ref: Ref) -> None:
        """Take in one task's TASK.md: from the last server's row when the file's stamp is the row's,
        else read and parsed (its stamp kept when it is old enough to prove it)."""
        key = (ref.change, ref.session, ref.task)
        opened: list[Stamp | None] = []  # the stamp to keep, taken before the read
        try:
            task_fd = open_dir(round_fd, ref.task)
        except (OSError, HandoffError):
            return
        try:
            if (kept := (self._kept or {}).get(key)) is not None:
                info = os.stat(TASK_FILE, dir_fd=task_fd, follow_symlinks=False)
                if (row := proven(kept, info)) is not None:
                    self._add(key, ref, row)
                    return
            entry = read_entry(task_fd, TASK_FILE, before_read=lambda fd: opened.append(read_stamp(fd, self.settle_ns)))
        except (OSError, HandoffError):
            return
        finally:
            os.close(task_fd)
        if entry.data is None:
            return  # no TASK yet (or not a readable one): look again next time
        self.read += 1
        self._unsaved = True
        kept = opened[0] if opened else None
        self._add(key, ref, (kept, recorded_check(entry.data, ref)))

    def _add(self, key: Key, ref: Ref, row: Row) -> None:
        self._seen[key] = row
        if (check := row[1]) is not None and self._refs.setdefault(check, ref) != ref:
            self._doubled.add(check)

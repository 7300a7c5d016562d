"""create_task as history grows, each figure beside its floor from the same process.

Both kinds of dispatch are measured: a review never reads the claims, an implementation task reads
them all. A fresh process stats each task of every active change (``first``: its first dispatch into
a tree); a server answers from its claim rows (``services.tree.claim_rows``: a stat per round and
per live task), kept in its cache across restarts (``server_first``: a server's first dispatch, with
no rows, beside a read walk of the tree in the same round, and restarted from them, and the inotify
watches it holds). ``steady``: a server's later
dispatches, alternated one by one between the tree, an empty tree and two floors: the durable-create
loop (temp file, fsync, link, unlink, directory fsync) of one file, under any dispatch; and one bare
stat per task of the tree's active changes, under any answer derived from files that can change;
then again with the tree's change archived.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Any

from bench import token_index
from bench.latency import _request
from bench.stats import FloorFailed, child_runs, paired, timed
from bench.trees import CHANGE, make_change
from handoff_core.contract.scope import Scope
from handoff_core.contract.task import TaskBody
from handoff_core.layout import Kind
from handoff_core.services.writing.dispatch import TaskRequest
from handoff_core.services.writing.store import Store

DISPATCH = "2026-11-30-dispatch"  # made beside the tree's own change and removed after each child
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
KINDS: tuple[Kind, ...] = ("review", "implementation")
STEADY_ROWS = "claim-rows-steady"  # the steady servers' cache folder, beside the empty tree


def request(kind: str, index: int, session: str | None) -> TaskRequest:
    if kind == "review":
        return _request(DISPATCH, index, session)
    body = TaskBody(
        kind="implementation",
        goal=f"Change part {index}.",
        inputs="the plan",
        scope=Scope(workspace="current", writable=("src/**",)),
        acceptance="tests pass",
    )
    return TaskRequest(change=DISPATCH, topic=f"change-{index + 1}", body=body, session=session)


def dispatch(store: Store, kind: str, index: int, session: str | None) -> tuple[float, str]:
    """One timed create_task; an implementation task is then released (untimed) so the next may run."""
    start = time.perf_counter()
    ref = store.create_task(request(kind, index, session)).ref
    seconds = time.perf_counter() - start
    if kind == "implementation":
        store.release_writer(ref, "none", "bench: no writer was started")
    return seconds, ref.session


def durable_create(dir_fd: int, index: int, data: bytes) -> None:
    """The floor: what publishing one write-once file costs the disk, with nothing else around it."""
    temp = f".f{index}.tmp"
    fd = os.open(temp, _CREATE, 0o644, dir_fd=dir_fd)
    os.write(fd, data)
    os.fsync(fd)
    os.close(fd)
    os.link(temp, f"f{index}", src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    os.unlink(temp, dir_fd=dir_fd)
    os.fsync(dir_fd)


def stat_each_task(state_root: Path) -> int:
    """The floor under an answer the files can change at any time: one stat per task, nothing else."""
    found = 0
    for sessions in state_root.glob("specdev/changes/*/sessions"):
        for round_name in os.listdir(sessions):
            round_fd = os.open(sessions / round_name, os.O_RDONLY | os.O_DIRECTORY)
            for task in os.listdir(round_fd):
                found += bool(os.stat(f"{task}/TASK.md", dir_fd=round_fd, follow_symlinks=False))
            os.close(round_fd)
    return found


def first_child(state_root: Path, kind: str) -> None:
    store = Store(state_root)
    print(json.dumps({"seconds": dispatch(store, kind, 0, None)[0]}))


def inotify_watches() -> int:
    """The kernel watches this process holds: one ``inotify wd:`` line each in its fds' fdinfo."""
    found = 0
    for info in Path("/proc/self/fdinfo").iterdir():
        with suppress(OSError):
            found += sum(line.startswith("inotify wd:") for line in info.read_text().splitlines())
    return found


def server_first_child(state_root: Path, cache: Path) -> None:
    """A server process's first implementation dispatch, its claim rows kept in ``cache``."""
    os.environ["HANDOFF_CACHE_DIR"] = str(cache)
    store = Store(state_root)
    store.queries.keep_claim_rows()  # as a server does
    seconds = dispatch(store, "implementation", 0, None)[0]
    store.queries.save_claim_rows()  # as a server leaving does: the next one starts from its rows
    print(json.dumps({"seconds": seconds, "watches": inotify_watches()}))


def steady_child(state_root: Path, empty_root: Path, calls: int) -> None:
    # The servers' claim rows in the bench's own folder, not in this user's cache.
    os.environ["HANDOFF_CACHE_DIR"] = str(empty_root.parent / STEADY_ROWS)
    stores = {"tree": Store(state_root), "empty": Store(empty_root)}
    for store in stores.values():
        store.queries.keep_claim_rows()  # as a server does: rows per round, proven by a stat of each round
    first: dict[str, float] = {}  # a server's first implementation dispatch: its rows, or every task read
    sessions: dict[str, str] = {}
    for name, store in stores.items():
        first[name], sessions[name] = dispatch(store, "implementation", 0, None)
    if stat_each_task(state_root) == 0 and _has_tasks(state_root):
        raise FloorFailed(f"the stat floor found no task under {state_root}: its figure would be a lie")
    times: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(dir=empty_root) as floor_dir:
        dir_fd = os.open(floor_dir, os.O_RDONLY | os.O_DIRECTORY)
        subjects: list[tuple[str, Callable[[int], float]]] = [
            *(
                (f"{kind}_{name}", _dispatcher(store, kind, sessions[name]))
                for kind in KINDS
                for name, store in stores.items()
            ),
            ("floor", lambda index: timed(lambda: durable_create(dir_fd, index, b"x" * 1500))),
            ("stat_floor", lambda index: timed(lambda: stat_each_task(state_root))),
        ]
        order = random.Random(0)
        for index in range(1, calls + 1):
            # Alternated, so drift on the shared disk touches all alike; shuffled, so none always runs
            # right after a walk of the whole tree has pushed everything else out of the CPU's caches.
            for name, measure in order.sample(subjects, len(subjects)):
                times.setdefault(name, []).append(measure(index))
        os.close(dir_fd)
    medians: dict[str, object] = {name: statistics.median(values) for name, values in times.items()}
    subject = times["implementation_tree"]
    medians["implementation_tree_range_ms"] = [round(min(subject) * 1000, 3), round(max(subject) * 1000, 3)]
    medians["implementation_over_stat_floor"] = paired(subject, times["stat_floor"])
    medians["implementation_over_review"] = paired(subject, times["review_tree"])
    medians["first_server_implementation_tree_ms"] = round(first["tree"] * 1000, 2)
    print(json.dumps(medians))


def _has_tasks(state_root: Path) -> bool:
    return any(True for _ in state_root.glob("specdev/changes/*/sessions/*/*"))


def _dispatcher(store: Store, kind: str, session: str) -> Callable[[int], float]:
    return lambda index: dispatch(store, kind, index, session)[0]


def _run_child(args: list[str], state_root: Path) -> dict[str, Any]:
    make_change(state_root, DISPATCH)
    try:
        return dict(child_runs("bench.dispatch", args, 1, timeout=1800)[0])
    finally:
        shutil.rmtree(state_root / "specdev" / "changes" / DISPATCH)


def run(state_root: Path, work: Path, repeats: int, calls: int, archived: bool = True) -> dict[str, object]:
    """First dispatch of each kind and steady dispatch p50, in ms (and with the history archived)."""
    empty = work / "empty-tree"
    first: dict[str, list[float]] = {}
    for _ in range(repeats):
        for name in ("review", "implementation"):
            seconds = _run_child(["first", str(state_root), name], state_root)["seconds"]
            first.setdefault(name, []).append(seconds)
    steady = _steady(state_root, empty, calls)
    ms = {f"first_{name}_ms": round(statistics.median(values) * 1000, 2) for name, values in first.items()}
    ms.update(server_first(state_root, work, repeats))
    if not archived:
        return {**ms, **_named("steady", steady)}
    return {**ms, **_named("steady", steady), **_named("steady_archived", _archived_steady(state_root, empty, calls))}


def read_floor(state_root: Path) -> float:
    """The floor under the first server ever on a tree: a read walk of it (``bench.scaling.read_walk``:
    every handoff file opened and read once) in a fresh process, run twice and the second timed, so that
    it starts from the page cache the server after it finds (this machine pages out idle file pages)."""
    runs = [child_runs("bench.status", [str(state_root), "read"], 1)[0]["seconds"] for _ in range(2)]
    return float(runs[-1])


def server_first(state_root: Path, work: Path, repeats: int) -> dict[str, Any]:
    """A server's first implementation dispatch: with no rows in its cache (the first server ever on the
    tree, right after a read walk of it: its floor), then restarted (the rows the one before it left),
    alternated round by round; the kernel watches it holds. In the same rounds, a team server's token
    index (``bench.token_index``), the first ever and restarted from its rows."""
    cache = work / "claim-rows-cache"
    cold: list[float] = []
    restarted: list[float] = []
    floor: list[float] = []
    tokens: dict[bool, list[float]] = {False: [], True: []}  # a team server's token index: first, restarted
    watches = 0
    for _ in range(repeats):
        shutil.rmtree(cache, ignore_errors=True)
        floor.append(read_floor(state_root))
        for into in (cold, restarted):
            run = _run_child(["server_first", str(state_root), str(cache)], state_root)
            into.append(run["seconds"])
            watches = max(watches, run["watches"])
        for again in (False, True):
            tokens[again].append(token_index.built(state_root, cache, restarted=again))
    shutil.rmtree(cache, ignore_errors=True)
    return {
        "token_index_first_ms": round(statistics.median(tokens[False]) * 1000, 2),
        "token_index_restarted_ms": round(statistics.median(tokens[True]) * 1000, 2),
        "token_index_restarted_over_read_walk": paired(tokens[True], floor),
        "server_first_fresh_cache_ms": round(statistics.median(cold) * 1000, 2),
        "server_first_read_walk_ms": round(statistics.median(floor) * 1000, 2),
        "server_first_fresh_over_read_walk": paired(cold, floor),
        "server_first_restarted_ms": round(statistics.median(restarted) * 1000, 2),
        "server_first_inotify_watches": watches,
    }


def _named(prefix: str, figures: dict[str, Any]) -> dict[str, Any]:
    """Medians in seconds as ``<prefix>_<name>_p50_ms``; figures already in ms, ratios, ranges as named."""
    named: dict[str, Any] = {}
    for name, value in figures.items():
        if isinstance(value, float) and not name.endswith("_ms"):
            named[f"{prefix}_{name}_p50_ms"] = round(value * 1000, 3)
        else:
            named[f"{prefix}_{name}"] = value
    return named


def _archived_steady(state_root: Path, empty: Path, calls: int) -> dict[str, Any]:
    """Steady dispatch with the same history archived (specdev/archive/): what a finished change costs."""
    active = state_root / "specdev" / "changes" / CHANGE
    archived = state_root / "specdev" / "archive" / CHANGE
    archived.parent.mkdir(exist_ok=True)
    active.rename(archived)
    try:
        return _steady(state_root, empty, calls)
    finally:
        archived.rename(active)


def _steady(state_root: Path, empty: Path, calls: int) -> dict[str, Any]:
    """One steady child, beside an empty tree made afresh (else its dispatches would be retries)."""
    shutil.rmtree(empty, ignore_errors=True)
    make_change(empty, DISPATCH)
    try:
        return _run_child(["steady", str(state_root), str(empty), str(calls)], state_root)
    finally:
        shutil.rmtree(empty)
        shutil.rmtree(empty.parent / STEADY_ROWS, ignore_errors=True)


if __name__ == "__main__":
    what, root, *rest = sys.argv[1:]
    if what == "first":
        first_child(Path(root), rest[0])
    elif what == "server_first":
        server_first_child(Path(root), Path(rest[0]))
    else:
        steady_child(Path(root), Path(rest[0]), int(rest[1]))

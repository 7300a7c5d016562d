"""create_task as history grows, each figure beside its floor from the same process.

``first``: a fresh process's first dispatch into a tree (with the disk cache an earlier process
left, and without one). ``steady``: later dispatches, alternated one by one between the tree, an
empty tree and the floor under any dispatch: the durable-create loop (temp file, fsync, link,
unlink, directory fsync) of one file; then again with the tree's change archived.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench.latency import _request
from bench.stats import child_runs
from bench.trees import CHANGE, make_change
from handoff_core.services.store import Store

DISPATCH = "2026-11-30-dispatch"  # made beside the tree's own change and removed after each child
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW


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


def first_child(state_root: Path, cache_dir: str) -> None:
    store = Store(state_root, cache_dir=Path(cache_dir) if cache_dir != "off" else None)
    start = time.perf_counter()
    store.create_task(_request(DISPATCH, 0, None))
    print(json.dumps({"seconds": time.perf_counter() - start}))


def steady_child(state_root: Path, empty_root: Path, cache_dir: str, calls: int) -> None:
    stores = {"tree": Store(state_root, cache_dir=Path(cache_dir)), "empty": Store(empty_root)}
    sessions = {name: store.create_task(_request(DISPATCH, 0, None)).ref.session for name, store in stores.items()}
    times: dict[str, list[float]] = {"tree": [], "empty": [], "floor": []}
    data = b"x" * 1500
    with tempfile.TemporaryDirectory(dir=empty_root) as floor_dir:
        dir_fd = os.open(floor_dir, os.O_RDONLY | os.O_DIRECTORY)
        for index in range(1, calls + 1):  # alternated, so drift on the shared disk touches all alike
            for name, store in stores.items():
                start = time.perf_counter()
                store.create_task(_request(DISPATCH, index, sessions[name]))
                times[name].append(time.perf_counter() - start)
            start = time.perf_counter()
            durable_create(dir_fd, index, data)
            times["floor"].append(time.perf_counter() - start)
        os.close(dir_fd)
    print(json.dumps({name: statistics.median(values) for name, values in times.items()}))


def _run_child(args: list[str], state_root: Path) -> dict[str, float]:
    make_change(state_root, DISPATCH)
    try:
        return dict(child_runs("bench.dispatch", args, 1, timeout=1800)[0])
    finally:
        shutil.rmtree(state_root / "specdev" / "changes" / DISPATCH)


def run(state_root: Path, work: Path, cache_dir: Path, repeats: int, calls: int) -> dict[str, object]:
    """First dispatch (with and without the disk cache) and steady dispatch p50, in ms."""
    empty = work / "empty-tree"
    first: dict[str, list[float]] = {"cached": [], "uncached": []}
    for _ in range(repeats):
        for name, cache in (("cached", str(cache_dir)), ("uncached", "off")):
            first[name].append(_run_child(["first", str(state_root), cache], state_root)["seconds"])
    steady = _steady(state_root, empty, cache_dir, calls)
    archived = _archived_steady(state_root, empty, cache_dir, calls)
    ms = {f"first_{name}_ms": round(statistics.median(values) * 1000, 2) for name, values in first.items()}
    return {
        **ms,
        **{f"steady_{name}_p50_ms": round(value * 1000, 3) for name, value in steady.items()},
        **{f"steady_archived_{name}_p50_ms": round(value * 1000, 3) for name, value in archived.items()},
    }


def _archived_steady(state_root: Path, empty: Path, cache_dir: Path, calls: int) -> dict[str, float]:
    """Steady dispatch with the same history archived (specdev/archive/): what a finished change costs."""
    active = state_root / "specdev" / "changes" / CHANGE
    archived = state_root / "specdev" / "archive" / CHANGE
    archived.parent.mkdir(exist_ok=True)
    active.rename(archived)
    try:
        return _steady(state_root, empty, cache_dir, calls)
    finally:
        archived.rename(active)


def _steady(state_root: Path, empty: Path, cache_dir: Path, calls: int) -> dict[str, float]:
    """One steady child, beside an empty tree made afresh (else its dispatches would be retries)."""
    shutil.rmtree(empty, ignore_errors=True)
    make_change(empty, DISPATCH)
    try:
        return _run_child(["steady", str(state_root), str(empty), str(cache_dir), str(calls)], state_root)
    finally:
        shutil.rmtree(empty)


if __name__ == "__main__":
    what, root, *rest = sys.argv[1:]
    if what == "first":
        first_child(Path(root), rest[0])
    else:
        steady_child(Path(root), Path(rest[0]), rest[1], int(rest[2]))

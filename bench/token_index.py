"""A team server's token index at start, in a fresh process: the first ever on a tree (no rows: every
TASK.md read and parsed) and restarted (the rows the one before it saved: a stat of each task).

Run by ``bench.dispatch.server_first`` in the same rounds as its read walk of the tree, the floor
both are read against.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from bench.stats import FloorFailed, child_runs
from handoff_core.services.capabilities.token_index import TokenIndex


def child(state_root: Path, cache: Path) -> None:
    """One index built as a team server's first executor waits for it, its rows kept in ``cache``."""
    os.environ["HANDOFF_CACHE_DIR"] = str(cache)
    index = TokenIndex(state_root)
    start = time.perf_counter()
    index.build()
    seconds = time.perf_counter() - start
    print(json.dumps({"seconds": seconds, "read": index.read, "tasks": len(index)}))


def built(state_root: Path, cache: Path, *, restarted: bool) -> float:
    """Seconds to build the index; a restarted one must have read no TASK, a first one every TASK."""
    run = child_runs("bench.token_index", [str(state_root), str(cache)], 1, timeout=1800)[0]
    if not run["tasks"] or (run["read"] != 0 if restarted else run["read"] != run["tasks"]):
        kind = "restarted" if restarted else "first"
        raise FloorFailed(f"the {kind} token index read {run['read']} of {run['tasks']} TASKs: not what it times")
    return float(run["seconds"])


if __name__ == "__main__":
    child(Path(sys.argv[1]), Path(sys.argv[2]))

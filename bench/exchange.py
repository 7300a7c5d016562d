"""The external-web exchange: packaging 5,000 small files, checking a 20,000-entry return
archive, and judging a return at its policy's limits (every entry, then the secret scan of all its
text), each in a fresh process (time and peak RSS), beside a floor in the same run: for
packaging, reading the same files; for checking, listing the archive with zipfile alone; for
judging, the structural check and decompression alone.
"""

from __future__ import annotations

import io
import json
import statistics
import sys
import time
import zipfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.scaling import peak_rss_kb
from bench.stats import child_runs
from bench.trees import make_change

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def _tree(project: Path, files: int) -> None:
    for index in range(files):
        folder = project / "src" / f"pkg{index // 100}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"mod{index}.py").write_text(f"def f{index}():\n    return {index}\n")


def _archive(path: Path, entries: int) -> None:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for index in range(entries):
            archive.writestr(f"candidate/part{index // 500}/file{index}.txt", f"line {index}\n" * 4)
    path.write_bytes(out.getvalue())


def _limit_return(path: Path) -> None:
    """A return of source files filling the default policy: its entries and its bytes in all."""
    from handoff_core.contract.return_policy import ReturnPolicy

    policy = ReturnPolicy()
    size = policy.total_bytes // policy.entries - 200
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for index in range(policy.entries):
            lines = (
                f"def f{index}_{n}(value):  # doubled, plus one\n    return value * 2 + 1\n"
                for n in range(size // 60 + 1)
            )
            archive.writestr(f"candidate/src/m{index}.py", "".join(lines)[:size])
    path.write_bytes(out.getvalue())


def child(action: str, project: str, target: str) -> None:
    from handoff_core.contract.exchange import Channel
    from handoff_core.contract.return_policy import ReturnPolicy
    from handoff_core.files.archives import check_archive, read_checked
    from handoff_core.services.exchange.outbound import package_dispatch
    from handoff_core.services.writing.store import Store

    start = time.perf_counter()
    if action == "package":
        store = Store(Path(project) / "speculo" / ".speculo", Path(project))
        task = store.queries.read_task(next(iter(store.queries.status())).ref)[0]
        sealed = package_dispatch(Path(project), task, "bench", target, ["src"], Channel(), NOW)
        count = len(sealed.included)
    elif action == "read-floor":
        count = sum(len(path.read_bytes()) > 0 for path in sorted((Path(project) / "src").rglob("*.py")))
    elif action == "check":
        count = len(check_archive(Path(target).read_bytes()))
    elif action == "judge":
        from handoff_core.services.exchange.returns import judge_return

        count = len(judge_return(Path(target).read_bytes(), ReturnPolicy()))
    elif action == "read-floor-return":
        data = Path(target).read_bytes()
        count = len(read_checked(data, check_archive(data)))
    else:  # list-floor
        count = len(zipfile.ZipFile(io.BytesIO(Path(target).read_bytes())).infolist())
    seconds = time.perf_counter() - start
    print(json.dumps({"seconds": seconds, "peak_rss_mb": round(peak_rss_kb() / 1024, 1), "count": count}))


def run(work: Path, files: int, entries: int, repeats: int) -> dict[str, Any]:
    from bench.requests import review
    from handoff_core.services.writing.store import Store

    project = work / "exchange"
    make_change(project / "speculo" / ".speculo", "2026-11-30-demo")
    Store(project / "speculo" / ".speculo", project).create_task(review())
    _tree(project, files)
    archive = work / "return.zip"
    _archive(archive, entries)
    limit = work / "limit.zip"
    _limit_return(limit)
    names = ("package", "read-floor", "check", "list-floor", "judge", "read-floor-return")
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    for index in range(repeats):  # alternated: each subject beside its floor, in every round
        runs["package"] += child_runs("bench.exchange", ["package", str(project), f"d{index}"], 1)
        runs["read-floor"] += child_runs("bench.exchange", ["read-floor", str(project), "-"], 1)
        runs["check"] += child_runs("bench.exchange", ["check", str(project), str(archive)], 1)
        runs["list-floor"] += child_runs("bench.exchange", ["list-floor", str(project), str(archive)], 1)
        runs["judge"] += child_runs("bench.exchange", ["judge", str(project), str(limit)], 1)
        runs["read-floor-return"] += child_runs("bench.exchange", ["read-floor-return", str(project), str(limit)], 1)
    return {
        "files": files,
        "entries": entries,
        "archive_mb": round(archive.stat().st_size / 1024 / 1024, 1),
        "limit_mb": round(sum(info.file_size for info in zipfile.ZipFile(limit).infolist()) / 1024 / 1024, 1),
        **{
            name: {
                "seconds_min": round(min(r["seconds"] for r in values), 3),
                "seconds_median": round(statistics.median(r["seconds"] for r in values), 3),
                "peak_rss_mb": max(r["peak_rss_mb"] for r in values),
                "count": values[0]["count"],
            }
            for name, values in runs.items()
        },
    }


if __name__ == "__main__":
    child(*sys.argv[1:4])

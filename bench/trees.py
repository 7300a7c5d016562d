"""Generated handoff trees for scaling figures: real files, rendered by the core, written directly."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import handoff_core.contract.report as report_module
import handoff_core.contract.task as task_module
from handoff_core.contract.report import Report, render_report
from handoff_core.contract.scope import Scope
from handoff_core.contract.task import Task
from handoff_core.contract.task_file import render_task
from handoff_core.files.task_dir import sha256

CHANGE = "2026-11-30-bench"
TASKS_PER_ROUND = 100


def make_change(state_root: Path, change: str = CHANGE) -> Path:
    path = state_root / "specdev" / "changes" / change
    path.mkdir(parents=True, exist_ok=True)
    (path / "README.md").write_text("# bench\n\nOutcome: active\n")
    return path


def round_id(number: int) -> str:
    return f"20261130T{number // 3600 % 24:02d}{number // 60 % 60:02d}{number % 60:02d}Z"


def generate(state_root: Path, count: int) -> list[tuple[str, str, str]]:
    """``count`` tasks in rounds of 100: every third returned, the rest dispatched reviews."""
    change_dir = make_change(state_root)
    refs = []
    for index in range(count):
        session = round_id(index // TASKS_PER_ROUND)
        task = f"{index % TASKS_PER_ROUND + 1:03d}-bench-{index}"
        folder = change_dir / "sessions" / session / task
        folder.mkdir(parents=True)
        text = render_task(
            Task(
                kind="review",
                goal=f"Review part {index}.",
                inputs="diff",
                scope=Scope(workspace=None, writable=(), read_only=("src/**",)),
                acceptance="findings",
                session=session,
                task=task,
                report_path=f"speculo/.speculo/specdev/changes/{CHANGE}/sessions/{session}/{task}/REPORT.md",
                change=CHANGE,
            )
        ).encode()
        (folder / "TASK.md").write_bytes(text)
        if index % 3 == 0:
            report = Report(
                session=session,
                task=task,
                status="completed",
                focused="Read it. Found two issues. Stopped. Next: fix.",
                artifacts="none",
                verification="read only",
                task_sha256=sha256(text),
            )
            (folder / "REPORT.md").write_bytes(render_report(report).encode())
        refs.append((CHANGE, session, task))
    os.sync()
    return refs


def kept_tree(count: int, workdir: Path, keep_from: int = 100_000) -> Path:
    """A generated tree of ``count`` tasks; trees of ``keep_from`` tasks or more are kept between runs.

    Kept trees live under ``$XDG_CACHE_HOME/handoff-mcp-bench``, named by the text of this module
    and of the renderers, so a change to either makes a new one. Delete that folder to regenerate.
    """
    if count < keep_from:
        state_root = workdir / f"tree-{count}"
        generate(state_root, count)
        return state_root
    sources = b"".join(Path(m.__file__ or "").read_bytes() for m in (report_module, task_module))
    digest = hashlib.sha256(Path(__file__).read_bytes() + sources).hexdigest()[:12]
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "handoff-mcp-bench"
    state_root = base / f"tree-{count}-{digest}"
    if not (state_root / "complete").exists():
        shutil.rmtree(state_root, ignore_errors=True)
        generate(state_root, count)
        (state_root / "complete").write_text("")
    return state_root

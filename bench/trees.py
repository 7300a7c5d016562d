"""Generated handoff trees for scaling figures: real files, rendered by the core, written directly."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import handoff_core.contract.report as report_module
import handoff_core.contract.task as task_module
from handoff_core.contract.anchor import anchored
from handoff_core.contract.ids import Ref
from handoff_core.contract.report import Report, render_report
from handoff_core.contract.scope import Scope
from handoff_core.contract.task import Task
from handoff_core.contract.task_file import render_task
from handoff_core.files.task_dir import sha256
from handoff_core.services.capabilities.tokens import load_secret, task_anchor

CHANGE = "2026-11-30-bench"
TASKS_PER_ROUND = 100


def make_change(state_root: Path, change: str = CHANGE) -> Path:
    path = state_root / "specdev" / "changes" / change
    path.mkdir(parents=True, exist_ok=True)
    (path / "README.md").write_text("# bench\n\nOutcome: active\n")
    return path


def round_id(number: int) -> str:
    return f"20261130T{number // 3600 % 24:02d}{number // 60 % 60:02d}{number % 60:02d}Z"


def secret_of(state_root: Path) -> Path:
    """The Lead's secret of a generated tree's bench servers: outside its project (the tree's parent), one per tree."""
    return state_root.parent.parent / f"{state_root.parent.name}-secrets" / state_root.name


def anchor_key(state_root: Path, secret: Path) -> bytes:
    """The key the Lead's server anchors a TASK under, from ``secret`` (made when there is none yet)."""
    return task_anchor(load_secret(secret, state_root.parent), state_root, secret).key


def generate(state_root: Path, count: int, secret: Path | None = None) -> list[tuple[str, str, str]]:
    """``count`` tasks in rounds of 100: every third returned, the rest dispatched reviews; with the Lead's
    ``secret``, each TASK anchored as that Lead's server publishes it (``contract.anchor``)."""
    change_dir = make_change(state_root)
    if secret is not None:
        secret.parent.mkdir(parents=True, exist_ok=True)
    key = anchor_key(state_root, secret) if secret is not None else None
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
        )
        if key is not None:
            text = anchored(text, key, str(Ref(CHANGE, session, task)))
        data = text.encode()
        (folder / "TASK.md").write_bytes(data)
        if index % 3 == 0:
            report = Report(
                session=session,
                task=task,
                status="completed",
                focused="Read it. Found two issues. Stopped. Next: fix.",
                artifacts="none",
                verification="read only",
                task_sha256=sha256(data),
            )
            (folder / "REPORT.md").write_bytes(render_report(report).encode())
        refs.append((CHANGE, session, task))
    os.sync()
    return refs


def kept_tree(count: int, workdir: Path, keep_from: int = 100_000) -> Path:
    """A generated tree of ``count`` tasks, anchored by the secret at ``secret_of`` (what its bench servers
    pass as ``--secret-file``); trees of ``keep_from`` tasks or more are kept between runs, with that secret.

    Kept trees live under ``$XDG_CACHE_HOME/handoff-mcp-bench``, named by the text of this module
    and of the renderers, so a change to either makes a new one. Delete that folder to regenerate.
    """
    if count < keep_from:
        state_root = workdir / "trees" / f"tree-{count}"
        generate(state_root, count, secret_of(state_root))
        return state_root
    sources = b"".join(Path(m.__file__ or "").read_bytes() for m in (report_module, task_module))
    digest = hashlib.sha256(Path(__file__).read_bytes() + sources).hexdigest()[:12]
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "handoff-mcp-bench"
    state_root = base / f"tree-{count}-{digest}"
    if not (state_root / "complete").exists() or not secret_of(state_root).exists():
        shutil.rmtree(state_root, ignore_errors=True)
        generate(state_root, count, secret_of(state_root))
        (state_root / "complete").write_text("")
    return state_root

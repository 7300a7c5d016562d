"""A TASK read from the team server, for a guard on a machine without the Lead's handoff tree.

The TASK comes pinned by its SHA-256 and cached per user through ``team_task`` (the hook process's
lean way, which this module re-exports); here are what a sandbox launch and the pre-commit hook need
beyond the bytes: the scope rule judged in the executor's own clone, and the stop asked of the team
server. No answer and no cached copy is a refusal (``TeamServerError``), which the guard turns into
a deny.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path

from handoff_core.contract.task_file import parse_task
from handoff_core.errors import TeamServerError, WorkspaceRefused
from handoff_core.files.git import work_tree_of
from handoff_core.layout import DEFAULT_STATE_ROOT
from handoff_core.services.evidence.team_task import TIMEOUT, pinned_task, post
from handoff_core.services.rules.scope_rule import ScopeRule

__all__ = ["RemoteTask", "ask_stop", "remote_task", "stop_url", "task_cache"]


def task_cache() -> Path:
    """Where a guard keeps the TASKs it read: this user's cache directory."""
    from handoff_core.files.executor_home import cache_root

    return Path(cache_root()) / "tasks"


def stop_url(url: str) -> str:
    """The team server's stop endpoint beside the executor endpoint ``url`` (``…/executor/mcp``)."""
    return url.removesuffix("/").removesuffix("/mcp") + "/stop"


def ask_stop(url: str, token: str, ref: str, session_id: str, active: bool, timeout: float = TIMEOUT) -> bool:
    """Whether the team server blocks this end of a session of ``ref`` (it has no REPORT): the server
    counts the blocks and records an end without a REPORT where the Lead reads them. Raises
    ``TeamServerError`` when it cannot be asked or refuses."""
    where = stop_url(url)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    asked = {"ref": ref, "session_id": session_id, "stop_hook_active": active}
    status, _, body = post(where, asked, headers, timeout)
    if status != HTTPStatus.OK:
        raise TeamServerError(f"the team server answered the stop with HTTP {status}: {body[:200]!r}")
    try:
        answer = json.loads(body)
    except ValueError as exc:
        raise TeamServerError("the team server's answer to the stop is not JSON") from exc
    if not isinstance(answer, dict) or not isinstance(answer.get("block"), bool):
        raise TeamServerError("the team server's answer to the stop says neither block nor let go")
    return bool(answer["block"])


def remote_task(url: str, token: str, ref: str, sha: str, cache: Path | None = None) -> str:
    """The TASK text of ``ref`` whose bytes hash to ``sha``: from the cache when a copy there still
    hashes to it, else from the team server (then cached). Refused when neither gives those bytes."""
    return pinned_task(url, token, ref, sha, str(cache or task_cache())).decode("utf-8")


@dataclass(frozen=True)
class RemoteTask:
    """Where a guard without the Lead's tree gets its task: the team server's executor endpoint, the
    task's token and the pinned sha256; the task's root is the executor's own clone."""

    url: str
    token: str
    ref: str
    sha: str
    project_root: Path | None = None  # None: the clone the event's working directory lies in

    def rule(self, cwd: str) -> ScopeRule:
        """The scope rule of the task, judged in the clone holding ``cwd`` (or the root given)."""
        text = remote_task(self.url, self.token, self.ref, self.sha)
        root = self.project_root or work_tree_of(Path(os.path.realpath(cwd)))
        if root is None:
            raise WorkspaceRefused(f"{cwd} is in no git clone: run the executor in its clone of the project")
        root = Path(os.path.realpath(root))
        return ScopeRule(parse_task(text.removeprefix("\ufeff")), self.ref, root, root / DEFAULT_STATE_ROOT)

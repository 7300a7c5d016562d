"""A sandboxed launch on a machine without the Lead's tree (``--url``): the TASK comes from the team
server, pinned by its sha256 as the guard reads it (``evidence.remote_task``), and the grants are
drawn in the executor's own clone of the project."""

from __future__ import annotations

import os

from handoff_core.errors import HandoffError, SandboxRefused
from handoff_core.files.git_config import work_tree_top
from handoff_core.layout import DEFAULT_STATE_ROOT
from handoff_core.services.evidence.remote_task import remote_task
from handoff_core.services.evidence.task_pin import PinnedTask, TaskUnreadable

__all__ = ["remote_pinned"]


def remote_pinned(options: dict[str, str], environ: dict[str, str]) -> tuple[PinnedTask, str, str]:
    """The TASK the team server holds for ``--ref``, hashing to ``--task-sha256``; the clone's root
    (``--project-root``, else the work tree of the working folder) and its state root. Each refusal is a
    ``SandboxRefused``: nothing was launched."""
    ref, pin = options["--ref"], options["--task-sha256"]
    variable = options.get("--token-env", "HANDOFF_TOKEN")
    token = environ.get(variable, "")
    if not token:
        raise SandboxRefused(f"${variable} is empty: export the task's report token there first")
    root = options.get("--project-root") or work_tree_top(os.getcwd())
    if not root:
        raise SandboxRefused(f"{os.getcwd()} is in no git clone: launch the executor in its clone of the project")
    try:
        pinned = PinnedTask(remote_task(options["--url"], token, ref, pin).encode(), pin, has_report=False)
    except (HandoffError, TaskUnreadable) as exc:
        raise SandboxRefused(f"cannot use the task ({getattr(exc, 'message', exc)}); nothing was launched") from exc
    project = os.path.realpath(root)
    return pinned, project, os.path.join(project, DEFAULT_STATE_ROOT)

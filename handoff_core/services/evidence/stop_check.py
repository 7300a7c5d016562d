"""The Stop hook: no executor ends without its REPORT.

While the task has no REPORT, the end is blocked with what to do: call ``write_report``, whatever
the outcome (every status counts: completed, blocked, failed, cancelled). After
``endings.MAX_STOP_BLOCKS`` blocks of one session it lets go and records that the session ended
without a REPORT, so it never loops; a cache it cannot write leaves the CLI's ``stop_hook_active``
as the bound (one block). A stop event it cannot read lets go: the CLI, not the executor, writes it,
and blocking what cannot be read would loop.
"""

from __future__ import annotations

import json

from handoff_core.services.evidence.endings import MAX_STOP_BLOCKS, count_block, record_ending
from handoff_core.services.evidence.task_pin import TaskUnreadable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from handoff_core.services.evidence.hook import Hook, Verdict

__all__ = ["STATUSES", "judge_stop"]

STATUSES = ("completed", "blocked", "failed", "cancelled")  # layout.REPORT_STATUSES (a test pins them equal)


def _stop_event(data: bytes) -> dict[str, object] | None:
    try:
        event = json.loads(data)
    except (ValueError, RecursionError):
        return None
    return event if isinstance(event, dict) and event.get("hook_event_name", "Stop") == "Stop" else None


def judge_stop(hook: Hook, data: bytes) -> Verdict:
    from handoff_core.services.evidence.hook import ALLOW, Verdict

    event = _stop_event(data)
    if event is None or hook.url is not None:  # from the team server: whether a REPORT exists is not known here
        return ALLOW
    try:
        if hook.task().has_report:
            return ALLOW
        missing = "has no REPORT yet"
    except TaskUnreadable as exc:
        missing = f"cannot be read ({exc})"
    session = event.get("session_id")
    session = session if isinstance(session, str) else ""
    count = count_block(hook.state_root, hook.ref, session) if session else None
    if (count is None and event.get("stop_hook_active") is True) or (count is not None and count >= MAX_STOP_BLOCKS):
        record_ending(hook.state_root, hook.ref, session)
        return ALLOW
    return Verdict(
        False,
        f"{hook.who}: the task {missing}. Before you end, publish your REPORT once with the handoff MCP tool "
        f"write_report (the arguments are in your dispatch message). Every outcome is a valid report: status "
        f"{', '.join(STATUSES[:-1])} or {STATUSES[-1]}, saying what was done and what was not.",
    )

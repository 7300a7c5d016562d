"""The Stop hook: no executor ends without its REPORT.

While the task has no REPORT, the end is blocked with what to do: call ``write_report``, whatever
the outcome (every status counts: completed, blocked, failed, cancelled). After
``endings.MAX_STOP_BLOCKS`` blocks of one session it lets go and records that the session ended
without a REPORT, so it never loops; a cache it cannot write leaves the CLI's ``stop_hook_active``
as the bound (one block). Where the count and the record live: in a sandbox, with its broker
outside it; for an executor elsewhere (``--url``), on the team server, which also knows whether the
REPORT is there; otherwise in this user's cache (``endings``). A stop event it cannot read lets go:
the CLI, not the executor, writes it, and blocking what cannot be read would loop.
"""

from __future__ import annotations

import json

from handoff_core.services.evidence.endings import stop_blocks
from handoff_core.services.evidence.hook_call import ALLOW, Decision
from handoff_core.services.evidence.task_pin import TaskUnreadable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from handoff_core.services.evidence.hook_call import Hook

__all__ = ["STATUSES", "judge_stop"]

STATUSES = ("completed", "blocked", "failed", "cancelled")  # layout.REPORT_STATUSES (a test pins them equal)


def _stop_event(data: bytes) -> dict[str, object] | None:
    try:
        event = json.loads(data)
    except (ValueError, RecursionError):
        return None
    return event if isinstance(event, dict) and event.get("hook_event_name", "Stop") == "Stop" else None


def judge_stop(hook: Hook, data: bytes) -> Decision:
    event = _stop_event(data)
    if event is None:
        return ALLOW
    session = event.get("session_id")
    session = session if isinstance(session, str) else ""
    active = event.get("stop_hook_active") is True
    if hook.url is not None:
        return _asked(hook, session, active)
    try:
        if hook.task().has_report:
            return ALLOW
        missing = "has no REPORT yet"
    except TaskUnreadable as exc:
        missing = f"cannot be read ({exc})"
    return Decision(False, _block(hook, missing)) if stop_blocks(hook.state_root, hook.ref, session, active) else ALLOW


def _block(hook: Hook, missing: str) -> str:
    return (
        f"{hook.who}: the task {missing}. Before you end, publish your REPORT once with the handoff MCP tool "
        f"write_report (the arguments are in your dispatch message). Every outcome is a valid report: status "
        f"{', '.join(STATUSES[:-1])} or {STATUSES[-1]}, saying what was done and what was not."
    )


def _asked(hook: Hook, session: str, active: bool) -> Decision:
    """The team server decides for an executor elsewhere: it knows whether the REPORT is there, and keeps
    the count and the record where the executor cannot write and the Lead reads. Unasked, the CLI's
    ``stop_hook_active`` is the bound (one block)."""
    from handoff_core.services.evidence.remote_task import ask_stop

    try:
        blocked = ask_stop(hook.url or "", hook.token(), hook.ref, session, active)
    except Exception as exc:  # any failure to ask is the one answer: not asked
        if active:
            return ALLOW
        said = getattr(exc, "message", None) or str(exc)
        return Decision(False, f"{_block(hook, 'may have no REPORT yet')} (the team server could not be asked: {said})")
    return Decision(False, _block(hook, "has no REPORT yet")) if blocked else ALLOW

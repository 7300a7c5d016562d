"""One call of the agent CLIs' hook: the task it judges for (its ref, its pinned SHA-256, the roots or
the team server it reads it from), and the decision it comes to.

The rules of each event (``shell_rule``, ``post_tool``, ``stop_check``) take a ``Hook`` and answer a
``Decision``; ``hook`` reads the flags and the event, asks them, and writes the answer. Stdlib only:
the hook process imports this on every event.
"""

from __future__ import annotations

import os

from handoff_core.services.evidence.task_pin import PinnedTask, TaskUnreadable, read_pinned

TYPE_CHECKING = False  # typing is not loaded at run time: the hook pays for every import
if TYPE_CHECKING:
    from handoff_core.services.rules.scope_rule import ScopeRule

__all__ = ["ALLOW", "Decision", "Hook"]


class Decision:
    """An allow (``reason`` empty) or a deny/block with its reason."""

    __slots__ = ("allow", "reason")

    def __init__(self, allow: bool, reason: str = "") -> None:
        self.allow, self.reason = allow, reason


ALLOW = Decision(True)


class Hook:
    """One hook invocation: its task, its event kind, and the roots it judges under."""

    def __init__(self, options: dict[str, str]) -> None:
        self.ref = options["--ref"]
        self.pin = options.get("--task-sha256")
        self.event_kind = options.get("--event", "pre-tool")
        self.client = options.get("--client", "claude-code")
        # --url: no tree on this machine; the TASK comes from the team server (team_task), pinned.
        self.url, self.token_env = options.get("--url"), options.get("--token-env", "HANDOFF_TOKEN")
        self.project_root = os.path.realpath(options["--project-root"]) if "--project-root" in options else ""
        self.state_root = os.path.realpath(options["--state-root"]) if "--state-root" in options else ""
        self.cwd = "/"  # the event's working directory, once read
        self._task: PinnedTask | None = None

    @property
    def who(self) -> str:
        note = "" if self.pin else " (unanchored: no --task-sha256, a changed TASK goes unnoticed)"
        return f"handoff guard for {self.ref}{note}"

    def task(self) -> PinnedTask:
        if self._task is None:
            if self.url is not None:
                from handoff_core.services.evidence.team_task import remote_pinned

                self._task = remote_pinned(self.url, self.token(), self.ref, self.pin or "")
            else:
                self._task = read_pinned(self.state_root, self.ref, self.pin)
        return self._task

    def token(self) -> str:
        """The report token, from the variable ``--token-env`` names (never argv)."""
        token = os.environ.get(self.token_env, "")
        if not token:
            raise TaskUnreadable(f"${self.token_env} is empty: export the task's report token there first")
        return token

    def rule(self) -> ScopeRule:
        if self.url is not None:  # judged in the executor's own clone, as the team server's task says
            from handoff_core.services.evidence.team_task import remote_rule

            return remote_rule(self.task(), self.ref, self.project_root, self.cwd)
        from handoff_core.services.rules.scope_rule import ScopeRule

        return ScopeRule(self.task().task, self.ref, self.project_root, self.state_root)

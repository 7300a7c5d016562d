"""The hook process of the agent CLIs: ``--ref REF --task-sha256 HEX [--event pre-tool|post-tool|stop]
[--client claude-code|codex] --project-root P --state-root S``, the event on stdin.

``pre-tool`` judges every path a tool names, and a shell command's git actions, before it runs;
``post-tool`` compares the task tree's changes after a shell command with the scope and tells the
agent at once what to put back; ``stop`` keeps an executor from ending without its REPORT, a
bounded number of times. A TASK whose bytes are not the pinned ones allows nothing. The hook fails
closed: an unreadable event, an unreadable TASK, any exception is a deny (or a block) with the
reason, never the CLI's non-blocking error (exit 1). It loads no more than a decision needs
(``tests`` pin the modules): the agent CLIs start it on every event.
"""

from __future__ import annotations

import json
import os
import sys

from handoff_core.services.evidence.hook_event import Event, EventUnreadable, read_event
from handoff_core.services.evidence.task_pin import PinnedTask, TaskUnreadable, read_pinned
from handoff_core.services.rules.scope_rule import ScopeRule

TYPE_CHECKING = False  # typing is not loaded at run time: the hook pays for every import
if TYPE_CHECKING:
    from typing import BinaryIO, TextIO

__all__ = ["CLIENTS", "EVENTS", "USAGE_EXIT", "Hook", "Verdict", "main", "run"]

EVENTS = ("pre-tool", "post-tool", "stop")
CLIENTS = ("claude-code", "codex")
USAGE_EXIT = 64  # EX_USAGE: neither an allow (0) nor a deny (2)
DENY_EXIT = 2  # both CLIs: block, the reason on stderr (the last resort, when stdout fails)
SHOWN_PATHS = 20
_FLAGS = ("--ref", "--task-sha256", "--event", "--client", "--project-root", "--state-root", "--url", "--token-env")


class Verdict:
    """An allow (``reason`` empty) or a deny/block with its reason."""

    __slots__ = ("allow", "reason")

    def __init__(self, allow: bool, reason: str = "") -> None:
        self.allow, self.reason = allow, reason


ALLOW = Verdict(True)


class Hook:
    """One hook invocation: its task, its event kind, and the roots it judges under."""

    def __init__(self, options: dict[str, str]) -> None:
        self.ref = options["--ref"]
        self.pin = options.get("--task-sha256")
        self.event_kind = options.get("--event", "pre-tool")
        self.client = options.get("--client", "claude-code")
        # --url: no tree on this machine; the TASK comes from the team server (remote_task), pinned.
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

                self._task = remote_pinned(self.url, self._token(), self.ref, self.pin or "")
            else:
                self._task = read_pinned(self.state_root, self.ref, self.pin)
        return self._task

    def _token(self) -> str:
        token = os.environ.get(self.token_env, "")
        if not token:
            raise TaskUnreadable(f"${self.token_env} is empty: export the task's report token there first")
        return token

    def rule(self) -> ScopeRule:
        if self.url is not None:  # judged in the executor's own clone, as the team server's task says
            from handoff_core.services.evidence.team_task import remote_rule

            return remote_rule(self.task(), self.ref, self.project_root, self.cwd)
        return ScopeRule(self.task().task, self.ref, self.project_root, self.state_root)

    def judge(self, data: bytes) -> Verdict:
        """The verdict on one event; every failure to judge is a deny with its reason."""
        if self.event_kind == "stop":
            from handoff_core.services.evidence.stop_check import judge_stop

            return judge_stop(self, data)
        try:
            event = read_event(data, self.event_kind)
            self.cwd = event.cwd
            if self.event_kind == "post-tool":
                from handoff_core.services.evidence.post_tool import judge_after_shell

                return judge_after_shell(self, event)
            verdict = self._pre_tool(event)
            if verdict.allow and event.command is not None and os.environ.get("HANDOFF_SANDBOX_WRITE") is None:
                from handoff_core.services.evidence.crossings import mark_start

                mark_start(self.ref, event.data)  # the post-tool reads what other trees changed since
            return verdict
        except EventUnreadable as exc:
            return Verdict(False, f"{self.who}: {exc}; denied")
        except TaskUnreadable as exc:
            return Verdict(False, f"{self.who}: cannot use the task ({exc}); denied")
        except Exception as exc:
            said = getattr(exc, "message", None)  # a HandoffError says what to do next
            why = said if isinstance(said, str) else type(exc).__name__
            return Verdict(False, f"{self.who}: the event could not be judged ({why}); denied")

    def _pre_tool(self, event: Event) -> Verdict:
        self.task()  # read first: a TASK that is not the published one allows no tool at all
        if event.command is not None:
            from handoff_core.services.evidence.shell_rule import judge_command

            if not (verdict := judge_command(self, event)).allow:
                return verdict
        if not event.paths:
            return ALLOW
        rule = self.rule()
        for path in event.paths:
            resolved = os.path.realpath(os.path.join(event.cwd, path))
            if (why := rule.judge(resolved) or _outside_sandbox(resolved)) is not None:
                note = "" if self.pin else "; unanchored: no --task-sha256, a changed TASK goes unnoticed"
                return Verdict(
                    False, f"handoff task {self.ref} may not write {resolved}: {why} ({rule.described()}{note})"
                )
        return ALLOW

    def answer(self, verdict: Verdict) -> str:
        """What goes on stdout, in the form both CLIs document for this event (the two agree today;
        ``--client`` is where they would part)."""
        if verdict.allow:
            return ""
        if self.event_kind == "pre-tool":
            output = {"hookEventName": "PreToolUse", "permissionDecision": "deny"}
            return json.dumps({"hookSpecificOutput": output | {"permissionDecisionReason": verdict.reason}})
        return json.dumps({"decision": "block", "reason": verdict.reason})


def _outside_sandbox(path: str) -> str | None:
    """Why the task's sandbox will not let ``path`` be written (its launch lists what it may write);
    None outside a sandbox, or where it may. The kernel refuses it anyway: this says why, first."""
    granted = os.environ.get("HANDOFF_SANDBOX_WRITE")  # layout.WRITABLE_VARIABLE (a test pins the two equal)
    if granted is None:
        return None
    for line in granted.split("\n"):
        if path == line.rstrip("/") or (line.endswith("/") and path.startswith(line)):
            return None
    return (
        "outside what the task's sandbox lets it write (nothing new can be made directly in a folder that also "
        "holds git's folder or the state root; scratch files go in $TMPDIR)"
    )


def _options(argv: list[str]) -> dict[str, str] | str:
    """The flags, or what is wrong with them."""
    options: dict[str, str] = {}
    index = 0
    while index < len(argv):
        flag, value = argv[index], None
        if "=" in flag and flag.startswith("--"):
            flag, value = flag.split("=", 1)
        if flag not in _FLAGS:
            return f"unknown argument {flag[:60]!r}"
        if value is None:
            if index + 1 >= len(argv):
                return f"{flag} needs a value"
            value, index = argv[index + 1], index + 1
        if flag in options:
            return f"{flag} given twice"
        options[flag] = value
        index += 1
    if "--ref" not in options:
        return "--ref REF is required"
    if "--url" in options and "--task-sha256" not in options:
        return "--url needs --ref REF and --task-sha256 HEX (as the launch line prints them)"
    if options.get("--event", "pre-tool") not in EVENTS or options.get("--client", "claude-code") not in CLIENTS:
        return f"--event is one of {', '.join(EVENTS)}; --client one of {', '.join(CLIENTS)}"
    for flag in ("--project-root", "--state-root"):  # with --url there is no tree here: none needed
        given = options.get(flag)
        if (given is None and "--url" not in options) or (given is not None and not os.path.isabs(given)):
            return "--project-root and --state-root must be absolute paths"
    return options


USAGE = (
    "usage: handoff-mcp guard --ref REF --task-sha256 HEX [--event pre-tool|post-tool|stop] "
    "[--client claude-code|codex] --project-root DIR --state-root DIR"
)


def run(argv: list[str], stdin: BinaryIO, stdout: TextIO, stderr: TextIO) -> int:
    """The hook on binary ``stdin`` (``.read(n)``) and text ``stdout``/``stderr`` (``.write``)."""
    parsed = _options(argv)
    if isinstance(parsed, str):
        stderr.write(f"{USAGE}\nhandoff-mcp guard: {parsed}\n")
        return USAGE_EXIT
    hook = Hook(parsed)
    try:
        verdict = hook.judge(stdin.read(_max_event() + 1))
        if not hook.pin:
            stderr.write(f"{hook.who}\n")
        stdout.write(hook.answer(verdict))
        stdout.flush()
    except BaseException as exc:
        stderr.write(f"handoff guard for {parsed['--ref']}: could not judge ({type(exc).__name__}); denied\n")
        return DENY_EXIT
    return 0


def _max_event() -> int:
    from handoff_core.services.evidence.hook_event import MAX_EVENT_BYTES

    return MAX_EVENT_BYTES


def main(argv: list[str] | None = None) -> int:
    return run(sys.argv[1:] if argv is None else argv, sys.stdin.buffer, sys.stdout, sys.stderr)

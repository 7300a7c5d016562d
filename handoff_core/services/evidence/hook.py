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

from handoff_core.services.evidence.hook_call import ALLOW, Decision, Hook
from handoff_core.services.evidence.task_pin import TaskUnreadable

TYPE_CHECKING = False  # typing is not loaded at run time: the hook pays for every import
if TYPE_CHECKING:
    from typing import BinaryIO, TextIO

    from handoff_core.services.evidence.hook_event import Event

__all__ = ["CLIENTS", "EVENTS", "USAGE_EXIT", "answer", "judge", "main", "run"]

EVENTS = ("pre-tool", "post-tool", "stop")
CLIENTS = ("claude-code", "codex")
USAGE_EXIT = 64  # EX_USAGE: neither an allow (0) nor a deny (2)
DENY_EXIT = 2  # both CLIs: block, the reason on stderr (the last resort, when stdout fails)
_FLAGS = ("--ref", "--task-sha256", "--event", "--client", "--project-root", "--state-root", "--url", "--token-env")


def judge(hook: Hook, data: bytes) -> Decision:
    """The decision on one event; every failure to judge is a deny with its reason."""
    if hook.event_kind == "stop":  # the stop event is read by its own rule: no tool, no paths
        from handoff_core.services.evidence.stop_check import judge_stop

        return judge_stop(hook, data)
    from handoff_core.services.evidence.hook_event import EventUnreadable, read_event

    try:
        event = read_event(data, hook.event_kind)
        hook.cwd = event.cwd
        if hook.event_kind == "post-tool":
            from handoff_core.services.evidence.post_tool import judge_after_shell

            return judge_after_shell(hook, event)
        decision = _pre_tool(hook, event)
        if decision.allow and event.command is not None and os.environ.get("HANDOFF_SANDBOX_WRITE") is None:
            from handoff_core.services.evidence.crossings import mark_start

            mark_start(hook.ref, event.data)  # the post-tool reads what other trees changed since
        return decision
    except EventUnreadable as exc:
        return Decision(False, f"{hook.who}: {exc}; denied")
    except TaskUnreadable as exc:
        return Decision(False, f"{hook.who}: cannot use the task ({exc}); denied")
    except Exception as exc:
        said = getattr(exc, "message", None)  # a HandoffError says what to do next
        why = said if isinstance(said, str) else type(exc).__name__
        return Decision(False, f"{hook.who}: the event could not be judged ({why}); denied")


def _pre_tool(hook: Hook, event: Event) -> Decision:
    hook.task()  # read first: a TASK that is not the published one allows no tool at all
    if event.command is not None:
        from handoff_core.services.evidence.shell_rule import judge_command

        if not (decision := judge_command(hook, event)).allow:
            return decision
    if not event.paths:
        return ALLOW
    rule = hook.rule()
    for path in event.paths:
        resolved = os.path.realpath(os.path.join(event.cwd, path))
        if (why := rule.judge(resolved) or _outside_sandbox(resolved)) is not None:
            note = "" if hook.pin else "; unanchored: no --task-sha256, a changed TASK goes unnoticed"
            return Decision(
                False, f"handoff task {hook.ref} may not write {resolved}: {why} ({rule.described()}{note})"
            )
    return ALLOW


def answer(hook: Hook, decision: Decision) -> str:
    """What goes on stdout, in the form both CLIs document for this event (the two agree today;
    ``--client`` is where they would part)."""
    if decision.allow:
        return ""
    if hook.event_kind == "pre-tool":
        output = {"hookEventName": "PreToolUse", "permissionDecision": "deny"}
        return json.dumps({"hookSpecificOutput": output | {"permissionDecisionReason": decision.reason}})
    return json.dumps({"decision": "block", "reason": decision.reason})


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
        decision = judge(hook, stdin.read(_max_event() + 1))
        if not hook.pin:
            stderr.write(f"{hook.who}\n")
        stdout.write(answer(hook, decision))
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

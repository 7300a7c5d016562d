"""A hook event of Claude Code or Codex, read: which event, which tool, the working folder, and
every path the tool names.

Claude Code sends ``Write``, ``Edit``, ``MultiEdit`` with ``tool_input.file_path`` and
``NotebookEdit`` with ``notebook_path``; Codex sends ``apply_patch`` with the patch as
``tool_input.command`` (or ``input``, or an argv ending in it) and names every shell tool ``Bash``
with ``tool_input.command``. Every path-bearing field of every tool is collected, not one per tool;
a tool this module does not know is judged on every field that looks like a path; only the CLIs'
read-only tools are passed without a look. Anything unreadable raises ``EventUnreadable``: a path
or a cwd holding a NUL or a lone surrogate among it.
Stdlib only: the hook process imports this.
"""

from __future__ import annotations

import json

__all__ = ["EVENT_NAMES", "MAX_EVENT_BYTES", "SHELL_TOOLS", "Event", "EventUnreadable", "read_event"]

MAX_EVENT_BYTES = 16 * 1024 * 1024  # a patch event carries the whole patch
EVENT_NAMES = {"pre-tool": "PreToolUse", "post-tool": "PostToolUse", "stop": "Stop"}
EDIT_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
PATCH_TOOLS = frozenset({"apply_patch", "applypatch"})
# Codex names its shell tools Bash in hook events; the others are its model-side names, in case.
SHELL_TOOLS = frozenset({"Bash", "exec_command", "shell", "shell_command", "local_shell", "unified_exec"})
READ_TOOLS = frozenset(
    {"Read", "Grep", "Glob", "LS", "WebFetch", "WebSearch", "TodoWrite", "TodoRead", "ExitPlanMode", "view_image"}
)
_PATH_KEYS = frozenset({"file_path", "notebook_path", "path", "paths", "filePath", "file", "files", "filename"})
_PATH_SUFFIXES = ("path", "paths", "file", "files", "dir", "directory", "target", "destination")
_PATCH_START = "*** Begin Patch"


class EventUnreadable(Exception):
    """The event cannot be judged as given: the hook denies."""


class Event:
    """What the hook needs of one event."""

    __slots__ = ("command", "cwd", "data", "paths", "tool")

    def __init__(self, data: dict[str, object], tool: str | None, cwd: str) -> None:
        self.data, self.tool, self.cwd = data, tool, cwd
        self.paths: list[str] = []  # every path the tool names, as given (relative to cwd or absolute)
        self.command: str | None = None  # a shell tool's command line

    def text(self, key: str) -> str:
        value = self.data.get(key)
        return value if isinstance(value, str) else ""


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return list(value)
    raise EventUnreadable("a path field holds neither a string nor a list of strings")


def _named_paths(given: dict[str, object], known: bool) -> list[str]:
    """The fields that name paths: the known names for a known tool; for another tool also any field
    whose name says path, file, dir or target."""
    found = []
    for key, value in given.items():
        lowered = key.lower()
        if key in _PATH_KEYS or (not known and lowered.endswith(_PATH_SUFFIXES)):
            if value is None:
                continue
            found += _strings(value)
    return found


def _patch_text(given: dict[str, object]) -> str:
    for key in ("command", "input", "patch"):
        value = given.get(key)
        if isinstance(value, list):  # ["apply_patch", "<patch>"]
            value = next((item for item in reversed(value) if isinstance(item, str) and _PATCH_START in item), None)
        if isinstance(value, str):
            return value
    raise EventUnreadable("an apply_patch event carries no patch")


def _patch(text: str) -> list[str]:
    """Each header's path as written and as Codex writes it (both judged: either may be the file)."""
    from handoff_core.services.evidence.codex_patch import PatchRefused, codex_path, patch_paths  # patches only

    try:
        named = patch_paths(text)
    except PatchRefused as exc:
        raise EventUnreadable(f"Codex would refuse this patch ({exc})") from exc
    return [variant for path in named for variant in dict.fromkeys((path, codex_path(path)))]


def _shell_command(given: dict[str, object]) -> str:
    value = given.get("command", given.get("cmd"))
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        import shlex

        return shlex.join(value)
    if isinstance(value, str):
        return value
    raise EventUnreadable("a shell event carries no command")


def _embedded_patches(command: str) -> list[str]:
    """A patch inside a shell command (``apply_patch <<'EOF' … EOF``): Codex applies those too."""
    paths: list[str] = []
    start = command.find(_PATCH_START)
    while start >= 0:
        end = command.find("*** End Patch", start)
        if end < 0:
            raise EventUnreadable("a shell command opens a patch it never closes")
        paths += _patch(command[start : end + len("*** End Patch")])
        start = command.find(_PATCH_START, end)
    return paths


def read_event(data: bytes, expected: str) -> Event:
    """The event on stdin, checked to be the ``expected`` kind (``pre-tool``, ``post-tool``, ``stop``)."""
    if len(data) > MAX_EVENT_BYTES:
        raise EventUnreadable("the hook event is too large to judge")
    try:
        event = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise EventUnreadable("the hook event is not JSON") from exc
    if not isinstance(event, dict):
        raise EventUnreadable("the hook event is not a JSON object")
    name = event.get("hook_event_name", EVENT_NAMES[expected] if expected == "pre-tool" else None)
    if name != EVENT_NAMES[expected]:
        raise EventUnreadable(f"the hook was set up for {EVENT_NAMES[expected]} but got {str(name)[:40]!r}")
    cwd = event.get("cwd")
    if not isinstance(cwd, str) or not cwd.startswith("/"):
        raise EventUnreadable("the hook event names no absolute cwd")
    tool = event.get("tool_name")
    found = Event(event, tool if isinstance(tool, str) else None, cwd)
    if expected == "stop":
        return found
    given = event.get("tool_input")
    if not isinstance(given, dict):
        raise EventUnreadable("the hook event has no tool_input object")
    _collect(found, given)
    if not all(map(_nameable, (cwd, *found.paths))):
        raise EventUnreadable("a path or the cwd holds a NUL or a lone surrogate, which names no file")
    return found


def _nameable(text: str) -> bool:
    """Whether ``text`` can name a file as the CLI would write it: no NUL (no system call takes one) and
    no lone surrogate (invalid Unicode, which the CLI would write as another name, or not at all)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return "\0" not in text


def _collect(event: Event, given: dict[str, object]) -> None:
    tool = event.tool
    if tool in READ_TOOLS:
        return
    known = tool in EDIT_TOOLS or tool in PATCH_TOOLS or tool in SHELL_TOOLS
    event.paths += _named_paths(given, known)
    if tool in PATCH_TOOLS:
        event.paths += _patch(_patch_text(given))
    elif tool in SHELL_TOOLS:
        event.command = _shell_command(given)
        event.paths += _embedded_patches(event.command)
    if (tool in EDIT_TOOLS or tool is None) and not event.paths:
        raise EventUnreadable(f"the {tool or 'unnamed'} event names no path")

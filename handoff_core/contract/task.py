"""TASK.md: rendered from structured input, parsed back, frozen once published (SPEC §4)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from handoff_core.contract.frontmatter import load_yaml, quote, split_frontmatter
from handoff_core.contract.globs import check_glob_count, check_globs
from handoff_core.contract.ids import check_round
from handoff_core.contract.ids import check_task as check_task_id
from handoff_core.contract.markdown import check_fragment, required_sections
from handoff_core.contract.values import is_real
from handoff_core.errors import InvalidContent, OwnershipConflict
from handoff_core.layout import KINDS, TASK_SECTIONS, WORKSPACES, Kind, Workspace

__all__ = [
    "META_KEYS",
    "Scope",
    "SharedPath",
    "Task",
    "TaskBody",
    "check_body",
    "check_scope",
    "normalise_task",
    "parse_task",
    "read_scope",
    "render_checked",
    "render_task",
    "task_of",
    "workspace_of",
]

META_KEYS = ("schema_version", "session", "task", "kind", "change", "ticket")
_SCOPE_FENCE = "```handoff-scope"
_LIST_START = "- Workspace: "
_RETURN_START = "- REPORT: "
_TOKEN_CHECK = "- Report token check: "  # noqa: S105 - a line label, not a secret
_TOKEN_CHECK_RE = re.compile(r"^sha256:[0-9a-f]{64}\Z")
_BAD_GLOB = re.compile(r"(^|/)\.\.(/|$)|^/|^[A-Za-z]:|[\\`\x00-\x1f]")


@dataclass(frozen=True)
class SharedPath:
    path: str
    owner: str


@dataclass(frozen=True)
class Scope:
    """Who may write what; parsed back from the ``handoff-scope`` block for ownership."""

    workspace: Workspace | None = None
    writable: tuple[str, ...] = ()
    read_only: tuple[str, ...] = ()
    shared: tuple[SharedPath, ...] = ()
    artifacts: tuple[str, ...] = ()
    notes: str = ""
    resources: tuple[str, ...] = ()  # named, exclusive among writers: port:5432, db:test, git-index


@dataclass(frozen=True)
class TaskBody:
    """What the Lead asks for, before ids are allocated: checked once, then rendered under them."""

    kind: Kind
    goal: str
    inputs: str
    scope: Scope
    acceptance: str
    return_notes: str = ""
    ticket: str | None = None


@dataclass(frozen=True, kw_only=True)
class Task(TaskBody):
    """Everything TASK.md says: the body under its identity."""

    session: str
    task: str
    report_path: str
    change: str | None = None
    # sha256 of the task's report token: any server that reads this TASK can check the token,
    # and the token itself never lies in the tree.
    token_check: str | None = None


def _check_glob(glob: str, where: str) -> str:
    if not glob or glob.strip() != glob or _BAD_GLOB.search(glob):
        raise InvalidContent(
            f"{where} glob {glob!r} is not a project-relative pattern: no leading '/', drive, '..', "
            "backslash, backtick or control character (e.g. src/a1/**)"
        )
    return glob


def workspace_of(value: str) -> Workspace | None:
    """The workspace a caller named; empty means none (a read-only task)."""
    if not value:
        return None
    for workspace in WORKSPACES:
        if value == workspace:
            return workspace
    raise InvalidContent(f"workspace {value!r} is not one of {', '.join(WORKSPACES)}; omit it for a read-only task")


def check_scope(kind: Kind, scope: Scope) -> Scope:
    """The scope rules that do not need the other tasks (those are ownership's)."""
    for name in ("writable", "read_only", "artifacts"):
        for glob in getattr(scope, name):
            _check_glob(glob, name)
    # What ownership intersects must parse as a glob it decides; every list is bounded.
    check_globs(scope.writable, "writable")
    check_globs(tuple(shared.path for shared in scope.shared), "shared")
    for name in ("read_only", "artifacts"):
        check_glob_count(getattr(scope, name), name)
    for resource in scope.resources:
        if not RESOURCE_RE.match(resource):
            raise InvalidContent(
                f"resource {resource!r} is not a name like port:5432, db:test, git-index or integration:main"
            )
    for shared in scope.shared:
        _check_glob(shared.path, "shared")
        if not is_real(shared.owner):
            raise InvalidContent(f"shared path {shared.path!r} needs a real owner (e.g. lead), not {shared.owner!r}")
    if kind == "implementation":
        if scope.workspace not in WORKSPACES:
            raise InvalidContent("an implementation task needs workspace 'current' or 'required'")
        if not scope.writable:
            raise InvalidContent("an implementation task needs at least one writable glob (e.g. src/a1/**)")
    elif scope.writable or scope.workspace is not None:
        raise OwnershipConflict(
            f"a {kind} task is read-only for project files: drop workspace and writable globs, "
            "and list the test outputs it may write under artifacts"
        )
    return scope


def check_body(body: TaskBody) -> TaskBody:
    """Normalise the Lead's text and refuse anything the file could not hold faithfully."""
    if body.kind not in KINDS:
        raise InvalidContent(f"kind {body.kind!r} is not one of {', '.join(KINDS)}")
    if body.ticket is not None and not (is_real(body.ticket) and body.ticket.isprintable()):
        raise InvalidContent(f"ticket {body.ticket!r} is a placeholder; omit it or give the real ticket id")
    scope = check_scope(body.kind, body.scope)
    notes = check_fragment(scope.notes, "scope notes") if scope.notes.strip() else ""
    return TaskBody(
        kind=body.kind,
        goal=check_fragment(body.goal, "goal"),
        inputs=check_fragment(body.inputs, "inputs"),
        scope=replace(scope, notes=notes),
        acceptance=check_fragment(body.acceptance, "acceptance"),
        return_notes=check_fragment(body.return_notes, "return notes") if body.return_notes.strip() else "",
        ticket=body.ticket,
    )


def task_of(
    body: TaskBody, *, session: str, task: str, change: str | None, report_path: str, token_check: str | None = None
) -> Task:
    """The TASK a checked body becomes under its allocated ids."""
    return Task(
        session=session,
        task=task,
        kind=body.kind,
        goal=body.goal,
        inputs=body.inputs,
        scope=body.scope,
        acceptance=body.acceptance,
        report_path=report_path,
        token_check=token_check,
        return_notes=body.return_notes,
        change=change,
        ticket=body.ticket,
    )


def _checked_token_check(value: str | None) -> str | None:
    if value is not None and not _TOKEN_CHECK_RE.match(value):
        raise InvalidContent("token_check must be 'sha256:' and 64 lowercase hex digits")
    return value


def _read_token_check(returns: str) -> str | None:
    for line in returns.split("\n"):
        if line.startswith(_TOKEN_CHECK) and _TOKEN_CHECK_RE.match(value := line[len(_TOKEN_CHECK) :].strip("`")):
            return value
    return None


def normalise_task(task: Task) -> Task:
    """A whole Task checked: its ids, and its body as ``check_body`` checks it."""
    check_round(task.session)
    check_task_id(task.task)
    return task_of(
        check_body(task),
        session=task.session,
        task=task.task,
        change=task.change,
        report_path=task.report_path,
        token_check=_checked_token_check(task.token_check),
    )


def _globs(values: tuple[str, ...]) -> str:
    return ", ".join(f"`{value}`" for value in values) or "none"


def _scope_lines(scope: Scope) -> list[str]:
    shared = ", ".join(f"`{s.path}` (owner: {s.owner})" for s in scope.shared) or "none"
    workspace = scope.workspace or "none (read-only task)"
    block = [_SCOPE_FENCE]
    if scope.workspace is not None:
        block.append(f"workspace: {quote(scope.workspace)}")
    block += [
        f"writable: {quote(list(scope.writable))}",
        f"read_only: {quote(list(scope.read_only))}",
        f"shared: {quote([{'path': s.path, 'owner': s.owner} for s in scope.shared])}",
        f"artifacts: {quote(list(scope.artifacts))}",
        *([f"resources: {quote(list(scope.resources))}"] if scope.resources else []),
        "```",
    ]
    readable = [
        f"{_LIST_START}{workspace}",
        f"- Writable: {_globs(scope.writable)}",
        f"- Read-only: {_globs(scope.read_only)}",
        f"- Shared: {shared}",
        f"- Artifacts: {_globs(scope.artifacts)}",
        *([f"- Resources: {_globs(scope.resources)}"] if scope.resources else []),
        "",
    ]
    return ([scope.notes, ""] if scope.notes else []) + readable + block


def render_task(task: Task) -> str:
    """TASK.md for any Task, checked first."""
    return render_checked(normalise_task(task))


def render_checked(task: Task) -> str:
    """TASK.md for a Task already checked (``normalise_task`` or ``check_body``); it must read back as given."""
    meta = [
        "---",
        "schema_version: 1",
        f"session: {quote(task.session)}",
        f"task: {quote(task.task)}",
        f"kind: {quote(task.kind)}",
    ]
    meta += [f"change: {quote(task.change)}"] if task.change is not None else []
    meta += [f"ticket: {quote(task.ticket)}"] if task.ticket is not None else []
    returns = [
        f"{_RETURN_START}`{task.report_path}` — written once by the executor with the write_report tool.",
        "- Reply after read-back: `session/task · Status · report location · one-sentence summary`.",
        "- session-locator.json is written by the Lead only, once the session log path is confirmed.",
    ]
    returns += [f"{_TOKEN_CHECK}`{task.token_check}`"] if task.token_check else []
    body = [
        "---",
        "",
        "# 任务简报",
        "",
        "## Goal",
        task.goal,
        "",
        "## Inputs",
        task.inputs,
        "",
        "## Workspace and Scope",
        *_scope_lines(task.scope),
        "",
        "## Acceptance",
        task.acceptance,
        "",
        "## Return",
        *([task.return_notes, ""] if task.return_notes else []),
        *returns,
        "",
    ]
    text = "\n".join(meta + body)
    if parse_task(text) != task:
        raise InvalidContent("the task text would not read back as given; simplify its Markdown and retry")
    return text


def _before_last(text: str, marker: str) -> tuple[str, str]:
    lines = text.split("\n")
    starts = [i for i, line in enumerate(lines) if line.startswith(marker)]
    if not starts:
        raise InvalidContent(f"TASK section is missing its generated '{marker.strip()}' list")
    return "\n".join(lines[: starts[-1]]).strip("\n"), "\n".join(lines[starts[-1] :])


def _parse_scope(section: str) -> Scope:
    notes, rest = _before_last(section, _LIST_START)
    lines = rest.split("\n")
    try:
        start = lines.index(_SCOPE_FENCE)
        end = lines.index("```", start + 1)
    except ValueError:
        raise InvalidContent("Workspace and Scope has no closed ```handoff-scope block") from None
    return _scope_from(load_yaml("\n".join(lines[start + 1 : end]), "handoff-scope block"), notes)


_SCOPE_KEYS = frozenset({"workspace", "writable", "read_only", "shared", "artifacts", "resources"})
RESOURCE_RE = re.compile(r"^[a-z][a-z0-9-]*(?::[A-Za-z0-9._/@-]+)?\Z")


def _strings(data: dict[object, object], key: str) -> tuple[str, ...]:
    value = data.get(key) or []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise InvalidContent(f"handoff-scope {key} must be a list of glob strings; render the TASK again")
    return tuple(value)


def _shared_paths(data: dict[object, object]) -> tuple[SharedPath, ...]:
    value = data.get("shared") or []
    if not isinstance(value, list) or not all(
        isinstance(item, dict) and isinstance(item.get("path"), str) and isinstance(item.get("owner"), str)
        for item in value
    ):
        raise InvalidContent("handoff-scope shared must list {path, owner} strings; render the TASK again")
    return tuple(SharedPath(item["path"], item["owner"]) for item in value)


def _scope_from(data: object, notes: str) -> Scope:
    """A scope block's values, every one of the type the renderer writes (a hand edit can hold anything)."""
    if not isinstance(data, dict) or not set(data) <= _SCOPE_KEYS:
        raise InvalidContent(
            "handoff-scope must map workspace, writable, read_only, shared, artifacts and resources only"
        )
    workspace = data.get("workspace")
    if workspace is not None and not isinstance(workspace, str):
        raise InvalidContent("handoff-scope workspace must be current or required")
    return Scope(
        workspace=workspace_of(workspace or ""),
        writable=_strings(data, "writable"),
        read_only=_strings(data, "read_only"),
        shared=_shared_paths(data),
        artifacts=_strings(data, "artifacts"),
        notes=notes,
        resources=_strings(data, "resources"),
    )


def read_scope(text: str) -> Scope | None:
    """Only the ``handoff-scope`` block of a TASK, without parsing the rest (used for claims).

    The renderer writes exactly one such block and refuses text that could open another, so a
    file with none or several is not ours as rendered: its scope is unreadable (None).
    """
    opener = f"\n{_SCOPE_FENCE}\n"
    start = text.find(opener)
    end = text.find("\n```", start + 1) if start >= 0 else -1
    if end < 0 or text.count(opener) != 1:
        return None
    try:
        return _scope_from(load_yaml(text[start + len(_SCOPE_FENCE) + 2 : end], "handoff-scope block"), "")
    except InvalidContent:
        return None


def parse_task(text: str) -> Task:
    """Read TASK.md back into a Task; raises InvalidContent for anything malformed."""
    meta, body = split_frontmatter(text)
    unknown = set(meta) - set(META_KEYS)
    if unknown:
        raise InvalidContent(f"TASK: unknown metadata field(s) {sorted(unknown)}")
    found = required_sections(body, TASK_SECTIONS, "TASK")
    kind = meta.get("kind")
    if kind not in KINDS:
        raise InvalidContent(f"TASK: kind {kind!r} is not one of {', '.join(KINDS)}")
    return_notes, returns = _before_last(found["Return"], _RETURN_START)
    report = re.match(rf"^{re.escape(_RETURN_START)}`([^`]*)`", returns)
    return Task(
        session=str(meta.get("session")),
        task=str(meta.get("task")),
        kind=kind,
        goal=found["Goal"].strip("\n"),
        inputs=found["Inputs"].strip("\n"),
        scope=_parse_scope(found["Workspace and Scope"]),
        acceptance=found["Acceptance"].strip("\n"),
        report_path=report.group(1) if report else "",
        token_check=_read_token_check(returns),
        return_notes=return_notes,
        change=meta.get("change"),
        ticket=meta.get("ticket"),
    )

"""TASK.md: rendered from structured input, parsed back, frozen once published (SPEC §4)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, NamedTuple

from handoff_core.contract.frontmatter import load_yaml, quote, split_frontmatter
from handoff_core.contract.ids import check_round
from handoff_core.contract.ids import check_task as check_task_id
from handoff_core.contract.markdown import check_fragment, required_sections
from handoff_core.contract.proof import SIGNING_KEY_LABEL
from handoff_core.contract.scope import LIST_START, SCOPE_FENCE, Scope, check_scope, scope_from, scope_lines
from handoff_core.contract.values import is_real
from handoff_core.errors import InvalidContent, QuotedTokenCheck
from handoff_core.layout import KINDS, TASK_SECTIONS, TASK_TITLE, Kind

__all__ = [
    "META_KEYS",
    "Task",
    "TaskBody",
    "TaskIdentity",
    "check_body",
    "normalise_task",
    "parse_task",
    "render_checked",
    "render_task",
    "task_identity",
    "task_of",
]

META_KEYS = ("schema_version", "session", "task", "kind", "change", "ticket")
_RETURN_START = "- REPORT: "
_TOKEN_CHECK = "- Report token check: "  # noqa: S105 - a line label, not a secret
_TOKEN_CHECK_RE = re.compile(r"^sha256:[0-9a-f]{64}\Z")
_SIGNING_KEY_RE = re.compile(r"^ed25519:[A-Za-z0-9+/]{43}=\Z")


class TaskBody(NamedTuple):
    """What the Lead asks for, before ids are allocated: checked once, then rendered under them."""

    kind: Kind
    goal: str
    inputs: str
    scope: Scope
    acceptance: str
    return_notes: str = ""
    ticket: str | None = None


class Task(NamedTuple):
    """Everything TASK.md says: the body's fields (built by keyword) under the task's identity."""

    kind: Kind
    goal: str
    inputs: str
    scope: Scope
    acceptance: str
    session: str
    task: str
    report_path: str
    return_notes: str = ""
    ticket: str | None = None
    change: str | None = None
    # sha256 of the task's report token: any server that reads this TASK can check the token,
    # and the token itself never lies in the tree.
    token_check: str | None = None
    # The public half of the key pair the token seeds: a REPORT signed by it is proven (contract.proof).
    signing_key: str | None = None

    @property
    def body(self) -> TaskBody:
        return TaskBody(
            kind=self.kind,
            goal=self.goal,
            inputs=self.inputs,
            scope=self.scope,
            acceptance=self.acceptance,
            return_notes=self.return_notes,
            ticket=self.ticket,
        )


def _quoted_check(body: TaskBody) -> str | None:
    """The first field of ``body`` that holds the report token check label, in any case or fence."""
    scope = body.scope
    fields = {"goal": body.goal, "inputs": body.inputs, "acceptance": body.acceptance}
    fields |= {"return notes": body.return_notes, "scope notes": scope.notes, "ticket": body.ticket or ""}
    fields |= {"scope": "\n".join([*scope.writable, *scope.read_only, *scope.artifacts, *scope.resources])}
    fields["shared"] = "\n".join(f"{s.path}\n{s.owner}" for s in scope.shared)
    labels = [line.strip(" -").casefold() for line in (_TOKEN_CHECK, SIGNING_KEY_LABEL)]
    return next((name for name, text in fields.items() for label in labels if label in text.casefold()), None)


def check_body(body: TaskBody) -> TaskBody:
    """Normalise the Lead's text and refuse anything the file could not hold faithfully."""
    if body.kind not in KINDS:
        raise InvalidContent(f"kind {body.kind!r} is not one of {', '.join(KINDS)}")
    if body.ticket is not None and not (is_real(body.ticket) and body.ticket.isprintable()):
        raise InvalidContent(f"ticket {body.ticket!r} is a placeholder; omit it or give the real ticket id")
    scope = check_scope(body.kind, body.scope)
    if (field := _quoted_check(body._replace(scope=scope))) is not None:
        # The server writes the one check line of a TASK; a quoted one could pass for another task's.
        raise QuotedTokenCheck(
            f"the {field} holds a '{_TOKEN_CHECK.strip(' -')}' or '{SIGNING_KEY_LABEL.strip(' -')}' line; "
            "each TASK records only its own, "
            "written by the server: remove that line (refer to the other task by its ref) and retry"
        )
    notes = check_fragment(scope.notes, "scope notes") if scope.notes.strip() else ""
    return TaskBody(
        kind=body.kind,
        goal=check_fragment(body.goal, "goal"),
        inputs=check_fragment(body.inputs, "inputs"),
        scope=scope._replace(notes=notes),
        acceptance=check_fragment(body.acceptance, "acceptance"),
        return_notes=check_fragment(body.return_notes, "return notes") if body.return_notes.strip() else "",
        ticket=body.ticket,
    )


def task_of(
    body: TaskBody,
    *,
    session: str,
    task: str,
    change: str | None,
    report_path: str,
    token_check: str | None = None,
    signing_key: str | None = None,
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
        signing_key=signing_key,
        return_notes=body.return_notes,
        change=change,
        ticket=body.ticket,
    )


def _checked_token_check(value: str | None) -> str | None:
    if value is not None and not _TOKEN_CHECK_RE.match(value):
        raise InvalidContent("token_check must be 'sha256:' and 64 lowercase hex digits")
    return value


def _checked_signing_key(value: str | None) -> str | None:
    if value is not None and not _SIGNING_KEY_RE.match(value):
        raise InvalidContent("signing_key must be 'ed25519:' and 32 bytes in base64")
    return value


def _read_line(returns: str, label: str, pattern: re.Pattern[str]) -> str | None:
    for line in returns.split("\n"):
        if line.startswith(label) and pattern.match(value := line[len(label) :].strip("`")):
            return value
    return None


def normalise_task(task: Task) -> Task:
    """A whole Task checked: its ids, and its body as ``check_body`` checks it."""
    check_round(task.session)
    check_task_id(task.task)
    return task_of(
        check_body(task.body),
        session=task.session,
        task=task.task,
        change=task.change,
        report_path=task.report_path,
        token_check=_checked_token_check(task.token_check),
        signing_key=_checked_signing_key(task.signing_key),
    )


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
    returns += [f"{SIGNING_KEY_LABEL}`{task.signing_key}`"] if task.signing_key else []
    body = [
        "---",
        "",
        f"# {TASK_TITLE}",
        "",
        "## Goal",
        task.goal,
        "",
        "## Inputs",
        task.inputs,
        "",
        "## Workspace and Scope",
        *scope_lines(task.scope),
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
    notes, rest = _before_last(section, LIST_START)
    lines = rest.split("\n")
    try:
        start = lines.index(SCOPE_FENCE)
        end = lines.index("```", start + 1)
    except ValueError:
        raise InvalidContent("Workspace and Scope has no closed ```handoff-scope block") from None
    return scope_from(load_yaml("\n".join(lines[start + 1 : end]), "handoff-scope block"), notes)


class TaskIdentity(NamedTuple):
    """Whose a TASK says it is, and the hash of its report token (what a token index needs)."""

    session: str
    task: str
    change: str | None
    token_check: str | None


def _read(text: str) -> tuple[Mapping[str, Any], dict[str, str], str, str]:
    """Frontmatter, sections, and the Return section split into the Lead's notes and the generated list."""
    meta, body = split_frontmatter(text)
    unknown = set(meta) - set(META_KEYS)
    if unknown:
        raise InvalidContent(f"TASK: unknown metadata field(s) {sorted(unknown)}")
    found = required_sections(body, TASK_SECTIONS, "TASK")
    return_notes, returns = _before_last(found["Return"], _RETURN_START)
    return meta, found, return_notes, returns


def _identity(meta: Mapping[str, Any], returns: str) -> TaskIdentity:
    change = meta.get("change")
    check = _read_line(returns, _TOKEN_CHECK, _TOKEN_CHECK_RE)
    return TaskIdentity(
        str(meta.get("session")), str(meta.get("task")), change if isinstance(change, str) else None, check
    )


def task_identity(text: str) -> TaskIdentity:
    """``parse_task``'s ids and token check, read the same way but without the scope block; raises as it does."""
    meta, _, _, returns = _read(text)
    return _identity(meta, returns)


def parse_task(text: str) -> Task:
    """Read TASK.md back into a Task; raises InvalidContent for anything malformed."""
    meta, found, return_notes, returns = _read(text)
    kind = meta.get("kind")
    if kind not in KINDS:
        raise InvalidContent(f"TASK: kind {kind!r} is not one of {', '.join(KINDS)}")
    report = re.match(rf"^{re.escape(_RETURN_START)}`([^`]*)`", returns)
    identity = _identity(meta, returns)
    return Task(
        session=identity.session,
        task=identity.task,
        kind=kind,
        goal=found["Goal"].strip("\n"),
        inputs=found["Inputs"].strip("\n"),
        scope=_parse_scope(found["Workspace and Scope"]),
        acceptance=found["Acceptance"].strip("\n"),
        report_path=report.group(1) if report else "",
        token_check=identity.token_check,
        signing_key=_read_line(returns, SIGNING_KEY_LABEL, _SIGNING_KEY_RE),
        return_notes=return_notes,
        change=meta.get("change"),
        ticket=meta.get("ticket"),
    )

"""TASK.md's content: what the Lead asks for (``TaskBody``), checked once, and the ``Task`` it becomes under its ids."""

from __future__ import annotations

import re

from handoff_core.contract.checks import Check, check_checks, quotes_label
from handoff_core.contract.ids import check_round
from handoff_core.contract.ids import check_task as check_task_id
from handoff_core.contract.markdown import check_fragment
from handoff_core.contract.pattern import compile_on_use
from handoff_core.contract.proof import SIGNING_KEY_LABEL
from handoff_core.contract.record import NamedTuple
from handoff_core.contract.scope import Scope, check_scope
from handoff_core.contract.values import is_real
from handoff_core.errors import InvalidContent, QuotedTokenCheck
from handoff_core.layout import KINDS

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: handoff-validate never loads it
if TYPE_CHECKING:
    from handoff_core.layout import Kind

__all__ = [
    "ANCHOR_LABEL",
    "META_KEYS",
    "RETURN_START",
    "SIGNING_KEY_RE",
    "TOKEN_CHECK",
    "TOKEN_CHECK_RE",
    "Task",
    "TaskBody",
    "check_body",
    "normalise_task",
    "task_of",
]

META_KEYS = ("schema_version", "session", "task", "kind", "change", "ticket")
RETURN_START = "- REPORT: "
ANCHOR_LABEL = "- Task anchor: "  # the line contract.anchor writes and checks; known here, where a TASK is read
TOKEN_CHECK = "- Report token check: "  # noqa: S105 - a line label, not a secret
TOKEN_CHECK_RE = compile_on_use(r"^sha256:[0-9a-f]{64}\Z")
SIGNING_KEY_RE = compile_on_use(r"^ed25519:[A-Za-z0-9+/]{43}=\Z")


class TaskBody(NamedTuple):
    """What the Lead asks for, before ids are allocated: checked once, then rendered under them."""

    kind: Kind
    goal: str
    inputs: str
    scope: Scope
    acceptance: str
    return_notes: str = ""
    ticket: str | None = None
    checks: tuple[Check, ...] = ()  # the acceptance checks verify_task replays (contract.checks)


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
    checks: tuple[Check, ...] = ()

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
            checks=self.checks,
        )


def _quoted_check(body: TaskBody) -> str | None:
    """The first field of ``body`` that holds the report token check label, in any case or fence."""
    scope = body.scope
    fields = {"goal": body.goal, "inputs": body.inputs, "acceptance": body.acceptance}
    fields |= {"return notes": body.return_notes, "scope notes": scope.notes, "ticket": body.ticket or ""}
    fields |= {"scope": "\n".join([*scope.writable, *scope.read_only, *scope.artifacts, *scope.resources])}
    fields["stop conditions"] = "\n".join(scope.stop_conditions)
    fields["shared"] = "\n".join(f"{s.path}\n{s.owner}" for s in scope.shared)
    labels = [line.strip(" -").casefold() for line in (TOKEN_CHECK, SIGNING_KEY_LABEL, ANCHOR_LABEL)]
    return next((name for name, text in fields.items() for label in labels if label in text.casefold()), None)


# The line the rendered scope lists the authorised actions on, as a reader of the TASK finds it.
_ACTIONS_LINE = compile_on_use(r"^\s*[-*+]?\s*authori[sz]ed actions\s*:", re.IGNORECASE | re.MULTILINE)


def _quoted_actions(body: TaskBody) -> str | None:
    """The first field of ``body`` with a line that could pass for the rendered authorised actions."""
    fields = {"goal": body.goal, "inputs": body.inputs, "acceptance": body.acceptance}
    fields |= {"return notes": body.return_notes, "scope notes": body.scope.notes}
    fields["stop conditions"] = "\n".join(body.scope.stop_conditions)
    return next((name for name, text in fields.items() if _ACTIONS_LINE.search(text)), None)


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
            f"the {field} holds a '{TOKEN_CHECK.strip(' -')}', '{SIGNING_KEY_LABEL.strip(' -')}' or "
            f"'{ANCHOR_LABEL.strip(' -')}' line; "
            "each TASK records only its own, "
            "written by the server: remove that line (refer to the other task by its ref) and retry"
        )
    if (field := _quoted_actions(body._replace(scope=scope))) is not None:
        raise InvalidContent(
            f"the {field} holds an 'Authorised actions:' line; the TASK lists its actions once, from "
            "authorised_actions: pass them there and reword that line"
        )
    if quotes_label(body.acceptance):
        raise InvalidContent(
            "the acceptance holds a 'Checks:' line; the TASK lists its checks once, from acceptance_checks: "
            "pass them there and reword that line"
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
        checks=check_checks(tuple(body.checks)),
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
        checks=body.checks,
    )


def _checked_token_check(value: str | None) -> str | None:
    if value is not None and not TOKEN_CHECK_RE.match(value):
        raise InvalidContent("token_check must be 'sha256:' and 64 lowercase hex digits")
    return value


def _checked_signing_key(value: str | None) -> str | None:
    if value is not None and not SIGNING_KEY_RE.match(value):
        raise InvalidContent("signing_key must be 'ed25519:' and 32 bytes in base64")
    return value


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

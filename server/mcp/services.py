"""What every tool body needs: the settings, the store (writes), the queries (reads), the token secret,
the status answers being made; and the scope a task's session is held to.

Light to import: a server answers ``initialize`` before it builds its tools and their ``Services``
(``app.DeferredTools``), so the store, the queries and the broker are imported when first built.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from contextvars import ContextVar
from functools import partial
from typing import TYPE_CHECKING, Any, Final

from handoff_core.contract.ids import Ref, parse_ref
from handoff_core.errors import HandoffError, ScopeRefused
from handoff_core.layout import REPORT_FILE
from server.config import Settings
from server.mcp.answers import SharedAnswers

if TYPE_CHECKING:
    from handoff_core.contract.anchor import TaskAnchor
    from handoff_core.contract.report import Report
    from handoff_core.files.task_dir import StoredFile
    from handoff_core.services.handoffs.session_handoff import HandoffDoc
    from handoff_core.services.tree.queries import Queries
    from handoff_core.services.writing.store import Store, StoredDocument
    from server.mcp.models import Status

__all__ = [
    "HANDOFF_URI",
    "SCOPE_PARAMETERS",
    "TASK_SCOPE",
    "Services",
    "bearer_ref",
    "check_scope",
    "check_uri_scope",
    "handoff_uri",
    "open_store",
    "uri_ref",
]


# The task this call's session is scoped to: an HTTP executor's bearer token names it, a stdio executor
# started with --ref is fixed to it; None for the Lead and an unscoped executor.
TASK_SCOPE: ContextVar[Ref | None] = ContextVar("handoff_task_scope", default=None)

HANDOFF_URI: Final = "handoff://{change}/{session}/{task}/{name}"  # a task's file as a resource
# The parameters that name a task: a tool with none of them has no business in a task's session.
SCOPE_PARAMETERS: Final = ("ref", "change", "session")


def handoff_uri(ref: Ref, name: str) -> str:
    return HANDOFF_URI.format(change=ref.change, session=ref.session, task=ref.task, name=name)


def uri_ref(uri: str) -> Ref | None:
    """The task a ``handoff://`` URI names, or None for anything that is not one."""
    rest = uri.removeprefix("handoff://")
    if rest == uri:
        return None
    ref, _, _name = rest.rpartition("/")
    try:
        return parse_ref(ref)
    except HandoffError:
        return None


def _outside(scope: Ref) -> ScopeRefused:
    return ScopeRefused(
        f"this session's token is for {scope}; it can read that task and write its REPORT, nothing else"
    )


def check_scope(tool: str, parameters: Collection[str], arguments: Mapping[str, Any]) -> None:
    """The one scope check, before any tool runs: a task's session names its own task or is refused.

    Read from the tool's declared parameters, so that a new tool cannot forget it: one that names no
    task (no ``ref``, ``change`` or ``session``) is refused to a task's session outright.
    """
    if (scope := TASK_SCOPE.get()) is None:
        return
    if not any(name in parameters for name in SCOPE_PARAMETERS):
        raise ScopeRefused(f"{tool} is not open to the session of task {scope}; ask the Lead")
    if "ref" in parameters and _named_ref(arguments.get("ref")) != scope:
        raise _outside(scope)
    for part in ("change", "session"):
        if part in parameters and arguments.get(part) not in (None, "", getattr(scope, part)):
            raise _outside(scope)


def check_uri_scope(uri: str, scope: Ref | None) -> None:
    """A task's session reads and follows its own task's files only."""
    if scope is not None and uri_ref(uri) != scope:
        raise ScopeRefused(
            f"this session's token is for {scope}; follow and read its own files ({handoff_uri(scope, REPORT_FILE)})"
        )


def _named_ref(value: Any) -> Ref | None:
    """The task an argument names; None (refused in a scoped session) when it names none."""
    try:
        return parse_ref(value) if isinstance(value, str) else None
    except HandoffError:
        return None


def bearer_ref(request: Any) -> Ref | None:
    """The task an HTTP request's bearer token names (the SDK's auth middleware sets the user), or None."""
    user = request.scope.get("user") if request is not None else None
    claims = getattr(getattr(user, "access_token", None), "claims", None) or {}
    return parse_ref(claims["ref"]) if "ref" in claims else None


def open_store(settings: Settings, *, anchored: bool | None = None) -> Store:
    """The store of the configured state root, with its writer cap. ``anchored`` (by
    default: in the Lead's role) holds it to the Lead's secret: it anchors each TASK it publishes and
    judges every TASK by its anchor (``contract.anchor``); an executor's server has no secret to do so."""
    from handoff_core.services.writing.store import Store

    store = Store(settings.state_root, settings.project_root, writer_cap=settings.writer_cap)
    if settings.role == "lead" if anchored is None else anchored:
        store.queries.use_anchor(partial(_lead_anchor, settings))
    return store


def _lead_anchor(settings: Settings) -> TaskAnchor | None:
    """The anchor of the Lead's secret (``tokens.lead_anchor``): None while there is none, and TASKs are
    judged by the files."""
    from handoff_core.services.capabilities.tokens import lead_anchor

    return lead_anchor(settings.secret_file, settings.project_root, settings.state_root)


class Services:
    def __init__(
        self,
        settings: Settings,
        executor_url: str | None = None,
        on_dispatch: Callable[[Ref], None] | None = None,
        events: Callable[[], str] | None = None,
    ) -> None:
        from handoff_core.services.capabilities.tokens import task_anchor

        self.settings = settings
        self.executor_url = executor_url  # set behind the HTTP team server: executors connect there
        self._on_dispatch = on_dispatch  # behind it too: the token index learns a new task at once
        self.events = events or str  # how the team server learns of changes, when it is worth saying
        self.store = open_store(settings, anchored=False)
        self.store.queries.keep_claim_rows()  # a server answers many dispatches: rows per round, kept in the cache
        # The Lead's server, and behind the team server the executors' endpoint too (the Lead's process):
        # they hold the secret, made on first need as a dispatch makes it.
        if settings.role == "lead" or executor_url is not None:
            self.store.queries.use_anchor(lambda: task_anchor(self.secret(), settings.state_root, settings.secret_file))
        self.queries: Queries = self.store.queries
        self._secret: bytes | None = None
        self.status_answers: SharedAnswers[Status] = SharedAnswers()  # sessions asking at once share one

    def dispatched(self, ref: Ref) -> None:
        """A TASK was just published: whoever must know before any watcher tells them is told."""
        if self._on_dispatch is not None:
            self._on_dispatch(ref)

    def token(self, ref: Ref) -> str:
        from handoff_core.services.capabilities.tokens import report_token

        return report_token(self.secret(), self.settings.state_root, ref)

    def token_check(self, ref: Ref) -> str:
        """What the TASK records of its token, so that an executor's server checks it without the secret."""
        from handoff_core.services.capabilities.tokens import token_check

        return token_check(self.token(ref))

    def signing_key(self, ref: Ref) -> str:
        """The public key a TASK records, so that anyone holding the tree verifies its REPORT's signature."""
        from handoff_core.contract.proof import signing_key

        return signing_key(self.token(ref))

    def check_report_token(self, ref: Ref, token: str) -> None:
        """A token is checked against its TASK's recorded hash; a TASK from before hashes were recorded
        falls back to this server's secret."""
        from handoff_core.services.capabilities.tokens import check_task_token

        check_task_token(self.queries, ref, token, self.secret)

    def publish_report(
        self, report: Report, ref: Ref, token: str, task_sha256: str | None, accept_warnings: bool
    ) -> StoredFile:
        """The task's REPORT published: by the store, or in a sandbox by its broker outside it."""
        if self.settings.broker is not None:
            from handoff_core.services.containment.broker import brokered_report

            return brokered_report(self.settings.broker, ref, token, report, task_sha256, accept_warnings)
        return self.store.write_report(report, ref.change, task_sha256, accept_warnings, token=token)

    def publish_handoff(self, doc: HandoffDoc, redact: bool) -> StoredDocument:
        """A session handoff published: by the store, or in a sandbox by its broker outside it."""
        from handoff_core.services.handoffs import session_handoff

        if self.settings.broker is not None:
            from handoff_core.services.containment.broker import brokered_handoff

            return brokered_handoff(self.settings.broker, doc, redact)
        return session_handoff.publish(self.store, doc, redact)

    def secret(self) -> bytes:
        if self._secret is None:
            from handoff_core.services.capabilities.tokens import load_secret

            self._secret = load_secret(self.settings.secret_file, self.settings.project_root)
        return self._secret

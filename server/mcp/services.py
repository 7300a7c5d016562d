"""What every tool body needs: the settings, the store (writes), the queries (reads), the token secret."""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

from handoff_core.contract.ids import Ref, parse_ref
from handoff_core.contract.proof import signing_key
from handoff_core.errors import NotFound, ScopeRefused, TokenRefused
from handoff_core.services.capabilities.tokens import (
    check_token,
    check_token_hash,
    load_secret,
    report_token,
    token_check,
)
from handoff_core.services.tree.queries import Queries
from handoff_core.services.writing.store import Store
from server.config import Settings

__all__ = ["TASK_SCOPE", "Services", "bearer_ref", "open_store"]


# The task an HTTP executor session's bearer token names; None everywhere else (stdio, the Lead).
TASK_SCOPE: ContextVar[Ref | None] = ContextVar("handoff_task_scope", default=None)


def bearer_ref(request: Any) -> Ref | None:
    """The task an HTTP request's bearer token names (the SDK's auth middleware sets the user), or None."""
    user = request.scope.get("user") if request is not None else None
    claims = getattr(getattr(user, "access_token", None), "claims", None) or {}
    return parse_ref(claims["ref"]) if "ref" in claims else None


def open_store(settings: Settings) -> Store:
    """The store of the configured state root, with its writer cap and disk cache."""
    return Store(
        settings.state_root, settings.project_root, writer_cap=settings.writer_cap, cache_dir=settings.cache_dir
    )


class Services:
    def __init__(
        self,
        settings: Settings,
        executor_url: str | None = None,
        on_dispatch: Callable[[Ref], None] | None = None,
        events: Callable[[], str] | None = None,
    ) -> None:
        self.settings = settings
        self.executor_url = executor_url  # set behind the HTTP team server: executors connect there
        self._on_dispatch = on_dispatch  # behind it too: the token index learns a new task at once
        self.events = events or str  # how the team server learns of changes, when it is worth saying
        self.store = open_store(settings)
        self.queries: Queries = self.store.queries
        self._secret: bytes | None = None

    def in_scope(self, ref: Ref) -> Ref:
        """``ref``, unless this session is scoped to another task."""
        scope = TASK_SCOPE.get()
        if scope is not None and scope != ref:
            raise ScopeRefused(
                f"this session's token is for {scope}; it can read that task and write its REPORT, nothing else"
            )
        return ref

    def outside_any_task(self, what: str) -> None:
        """Refuse what a task's session may not do (it has no business outside its task)."""
        if (scope := TASK_SCOPE.get()) is not None:
            raise ScopeRefused(f"{what} is not open to the session of task {scope}; ask the Lead")

    def dispatched(self, ref: Ref) -> None:
        """A TASK was just published: whoever must know before any watcher tells them is told."""
        if self._on_dispatch is not None:
            self._on_dispatch(ref)

    def token(self, ref: Ref) -> str:
        return report_token(self.secret(), self.settings.state_root, ref)

    def token_check(self, ref: Ref) -> str:
        """What the TASK records of its token, so that an executor's server checks it without the secret."""
        return token_check(self.token(ref))

    def signing_key(self, ref: Ref) -> str:
        """The public key a TASK records, so that anyone holding the tree verifies its REPORT's signature."""
        return signing_key(self.token(ref))

    def check_report_token(self, ref: Ref, token: str) -> None:
        """A token is checked against its TASK's recorded hash; a TASK from before hashes were recorded
        falls back to this server's secret."""
        try:
            task, _ = self.queries.read_task(ref)
        except NotFound:  # say no more about a task than a wrong token would
            task = None
        if task is None:
            raise TokenRefused(f"the report token does not belong to {ref}; check the ref in your dispatch message")
        if task.token_check is not None:
            check_token_hash(task.token_check, ref, token)
        else:
            check_token(self.secret(), self.settings.state_root, ref, token)

    def secret(self) -> bytes:
        if self._secret is None:
            self._secret = load_secret(self.settings.secret_file, self.settings.project_root)
        return self._secret

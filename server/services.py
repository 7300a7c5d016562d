"""What every tool body needs: the settings, the store (writes), the queries (reads), the token secret."""

from __future__ import annotations

from handoff_core.contract.ids import Ref
from handoff_core.errors import NotFound, TokenRefused
from handoff_core.services.queries import Queries
from handoff_core.services.store import Store
from handoff_core.services.tokens import check_token, check_token_hash, load_secret, report_token, token_check
from server.config import Settings

__all__ = ["Services"]


class Services:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.store = Store(settings.state_root, settings.project_root, writer_cap=settings.writer_cap)
        self.queries: Queries = self.store.queries
        self._secret: bytes | None = None

    def token(self, ref: Ref) -> str:
        return report_token(self.secret(), self.settings.state_root, ref)

    def token_check(self, ref: Ref) -> str:
        """What the TASK records of its token, so that an executor's server checks it without the secret."""
        return token_check(self.token(ref))

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

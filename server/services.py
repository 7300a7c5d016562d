"""What every tool body needs: the settings, the store (writes), the queries (reads), the token secret."""

from __future__ import annotations

from handoff_core.contract.ids import Ref
from handoff_core.services.queries import Queries
from handoff_core.services.store import Store
from handoff_core.services.tokens import load_secret, report_token
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

    def secret(self) -> bytes:
        if self._secret is None:
            self._secret = load_secret(self.settings.secret_file, self.settings.project_root)
        return self._secret

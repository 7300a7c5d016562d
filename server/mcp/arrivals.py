"""Arrivals pushed: a client that subscribes to a task's REPORT.md is told when it appears.

A REPORT.md or RELEASE.md appearing anywhere in the tree, published by this server or written by
hand, is seen by the team server's one watcher (``server.web.watcher``) and announced twice: as a
``ResourceUpdated`` event on each server's subscription bus, for 2026 clients listening with
``subscriptions/listen``, and as ``notifications/resources/updated`` to every 2025-era session that
asked with ``resources/subscribe``. ``wait_for_reports`` keeps working for clients without either.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from mcp import types
from mcp.server.mcpserver import MCPServer
from mcp.server.subscriptions import InMemorySubscriptionBus, ResourceUpdated

from handoff_core.layout import CHANGES, CLOSING_FILES, SESSIONS

__all__ = ["Arrivals", "uri_of"]

logger = logging.getLogger(__name__)


def uri_of(state_root: Path, path: Path) -> str | None:
    """The resource URI of a closing file at ``path``, or None for anything else in the tree."""
    try:
        parts = path.relative_to(state_root).parts
    except ValueError:
        return None
    if len(parts) != 7 or parts[:2] != CHANGES or parts[3] != SESSIONS or parts[6] not in CLOSING_FILES:
        return None
    return f"handoff://{parts[2]}/{parts[4]}/{parts[5]}/{parts[6]}"


class Arrivals:
    def __init__(self, state_root: Path) -> None:
        self.state_root = state_root
        self.buses: list[InMemorySubscriptionBus] = []
        self._legacy: dict[str, set[Any]] = {}  # uri -> sessions that sent resources/subscribe

    def serve(self, server: MCPServer, bus: InMemorySubscriptionBus) -> None:
        """Announce arrivals to ``server``'s clients of both protocol eras."""
        self.buses.append(bus)
        lowlevel = server._lowlevel_server  # the SDK offers no public hook for the 2025-era method
        lowlevel.add_request_handler("resources/subscribe", types.SubscribeRequestParams, self._subscribe)
        lowlevel.add_request_handler("resources/unsubscribe", types.UnsubscribeRequestParams, self._unsubscribe)

    async def _subscribe(self, ctx: Any, params: types.SubscribeRequestParams) -> types.EmptyResult:
        self._legacy.setdefault(str(params.uri), set()).add(ctx.session)
        return types.EmptyResult()

    async def _unsubscribe(self, ctx: Any, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
        self._legacy.get(str(params.uri), set()).discard(ctx.session)
        return types.EmptyResult()

    async def announce(self, uris: Iterable[str]) -> None:
        for uri in uris:
            for bus in self.buses:
                await bus.publish(ResourceUpdated(uri=uri))
            for session in list(self._legacy.get(uri, ())):
                try:
                    await session.send_resource_updated(uri)
                except Exception:  # a closed session: forget it, keep telling the others
                    self._legacy[uri].discard(session)

    async def observe(self, batch: Iterable[tuple[int, str]], whole: bool) -> None:
        """Announce every closing file a watcher batch shows appearing under the state root."""
        from watchfiles import Change

        found = {uri_of(self.state_root, Path(path)) for change, path in batch if change != Change.deleted}
        await self.announce(sorted(uri for uri in found if uri))

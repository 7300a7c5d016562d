"""Arrivals pushed: a client that subscribes to a task's REPORT.md is told when it appears.

A REPORT.md or RELEASE.md appearing anywhere in the tree, published by this server or written by
hand, is seen by ``watchfiles``, and announced only once it ends the task's claim (an empty file, a
FIFO or a dangling link under that name is no arrival), (inotify, a maintained watcher) and announced twice: as a
``ResourceUpdated`` event on each server's subscription bus, for 2026 clients listening with
``subscriptions/listen``, and as ``notifications/resources/updated`` to every 2025-era session that
asked with ``resources/subscribe``. ``wait_for_reports`` keeps working for clients without either.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from contextlib import suppress
from pathlib import Path
from typing import Any

import anyio
from mcp import types
from mcp.server.mcpserver import MCPServer
from mcp.server.subscriptions import InMemorySubscriptionBus, ResourceUpdated

from handoff_core.contract.ids import parse_ref, ref_in
from handoff_core.layout import CLOSING_FILES, task_parts
from handoff_core.services.queries import ends_claim

__all__ = ["Arrivals", "uri_of"]

logger = logging.getLogger(__name__)


def uri_of(state_root: Path, path: Path) -> str | None:
    """The resource URI of a closing file at ``path``, or None for anything else in the tree."""
    try:
        parts = path.relative_to(state_root).parts
    except ValueError:
        return None
    ref = ref_in(parts)
    if ref is None or parts != (*task_parts(*ref), parts[-1]) or parts[-1] not in CLOSING_FILES:
        return None
    return f"handoff://{ref}/{parts[-1]}"


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

    async def watch(self, stop: anyio.Event) -> None:
        """Announce every closing file that appears under the state root, until ``stop``."""
        from watchfiles import Change, awatch

        with suppress(FileNotFoundError):
            async for changes in awatch(self.state_root, stop_event=stop, debounce=200, step=20, recursive=True):
                found = {uri_of(self.state_root, Path(path)) for change, path in changes if change != Change.deleted}
                ended = [
                    uri for uri in sorted(u for u in found if u) if await anyio.to_thread.run_sync(self._ends, uri)
                ]
                await self.announce(ended)

    def _ends(self, uri: str) -> bool:
        """Whether the closing file ``uri`` names ends its task's claim (``uri_of`` made it from a valid ref)."""
        ref, _, name = uri.removeprefix("handoff://").rpartition("/")
        return ends_claim(self.state_root, parse_ref(ref), name)

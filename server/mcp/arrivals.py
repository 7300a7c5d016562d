"""Arrivals pushed: a client that subscribes to a task's REPORT.md is told when it appears.

A REPORT.md or RELEASE.md appearing anywhere in the tree, published by this server or written by
hand, is seen by the team server's one watcher (``server.web.watcher``), and announced only once it
ends the task's claim (an empty file, a FIFO or a dangling link under that name is no arrival), twice: as a
``ResourceUpdated`` event on each server's subscription bus, for 2026 clients listening with
``subscriptions/listen``, and as ``notifications/resources/updated`` to every 2025-era session that
asked with ``resources/subscribe``. ``wait_for_reports`` keeps working for clients without either.

Both ways in pass through one ``ServerMiddleware`` (``MCPServer(middleware=...)``, the SDK's
public seam for spec methods; its extension ``MethodBinding`` refuses them): a task's session may
follow its own task's files only, a session at most ``MAX_FOLLOWED`` URIs, and one bearer at most
``MAX_STREAMS`` listen streams at once.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

import anyio
from mcp import types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.subscriptions import InMemorySubscriptionBus, ResourceUpdated
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from handoff_core.contract.ids import ref_in
from handoff_core.errors import HandoffError, InvalidArguments, TooManyStreams, TooManySubscriptions
from handoff_core.layout import CLOSING_FILES, task_parts
from handoff_core.services.tree.arrivals import ends_claim
from server.mcp.services import bearer_ref, check_uri_scope, handoff_uri, uri_ref

__all__ = ["MAX_FOLLOWED", "MAX_STREAMS", "Arrivals", "uri_of"]

logger = logging.getLogger(__name__)

MAX_FOLLOWED: Final = 64  # resource URIs one session (or one listen stream) may follow
MAX_STREAMS: Final = 16  # listen streams one bearer token may hold open at once
_SESSIONS: Final = 4096  # 2025-era sessions remembered; the oldest is forgotten first
_LEGACY_METHODS = ("resources/subscribe", "resources/unsubscribe")


def uri_of(state_root: Path, path: Path) -> str | None:
    """The resource URI of a closing file at ``path``, or None for anything else in the tree."""
    try:
        parts = path.relative_to(state_root).parts
    except ValueError:
        return None
    ref = ref_in(parts)
    if ref is None or parts != (*task_parts(*ref), parts[-1]) or parts[-1] not in CLOSING_FILES:
        return None
    return handoff_uri(ref, parts[-1])


def _refused(error: HandoffError) -> MCPError:
    return MCPError(types.INVALID_PARAMS, f"{error.code}: {error.message}")


def _check_scope(ctx: ServerRequestContext[Any, Any], uris: Iterable[str]) -> None:
    """A task's session follows its own task's files, nothing else."""
    ref = bearer_ref(ctx.request)
    for uri in uris:
        try:
            check_uri_scope(uri, ref)
        except HandoffError as exc:
            raise _refused(exc) from exc


class Arrivals:
    def __init__(self, state_root: Path) -> None:
        self.state_root = state_root
        self.buses: list[InMemorySubscriptionBus] = []
        self._legacy: dict[str, dict[str, Any]] = {}  # uri -> the sessions that sent resources/subscribe
        self._followed: dict[str, set[str]] = {}  # session -> the uris it follows
        self._streams: Counter[str] = Counter()  # bearer -> listen streams open

    def middleware(self, bus: InMemorySubscriptionBus) -> Any:
        """The ``ServerMiddleware`` announcing arrivals to one server's clients of both eras."""
        self.buses.append(bus)
        return self._intercept

    async def _intercept(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method in _LEGACY_METHODS and ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            return self._follow(ctx)
        if ctx.method == "subscriptions/listen":
            return await self._listen(ctx, call_next)
        result = await call_next(ctx)
        if ctx.method == "initialize" and isinstance(result, dict):
            _advertise(result)
        return result

    def _follow(self, ctx: ServerRequestContext[Any, Any]) -> HandlerResult:
        """``resources/subscribe`` and ``unsubscribe`` (2025 era), checked before anything is kept."""
        try:
            uri = str(types.SubscribeRequestParams.model_validate(ctx.params or {}, by_name=False).uri)
        except ValidationError as exc:
            raise _refused(InvalidArguments(exc.errors(include_url=False)[0]["msg"])) from exc
        key = _session_key(ctx)
        followed = self._followed.setdefault(key, set())
        if ctx.method == "resources/unsubscribe":
            followed.discard(uri)
            self._legacy.get(uri, {}).pop(key, None)
            return types.EmptyResult()
        _check_scope(ctx, [uri])
        if uri not in followed and len(followed) >= MAX_FOLLOWED:
            raise _refused(TooManySubscriptions(f"a session follows at most {MAX_FOLLOWED} URIs; unsubscribe one"))
        followed.add(uri)
        self._legacy.setdefault(uri, {})[key] = ctx.session
        if len(self._followed) > _SESSIONS:  # sessions that left without a word are not kept forever
            gone, uris = next(iter(self._followed.items()))
            del self._followed[gone]
            for each in uris:
                self._legacy.get(each, {}).pop(gone, None)
        return types.EmptyResult()

    async def _listen(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        """``subscriptions/listen`` (2026 era): scoped and bounded like the 2025 way, then the SDK's own."""
        notifications = (ctx.params or {}).get("notifications") or {}
        uris = [str(uri) for uri in (notifications.get("resourceSubscriptions") or [])]
        _check_scope(ctx, uris)
        if len(uris) > MAX_FOLLOWED:
            raise _refused(TooManySubscriptions(f"a stream follows at most {MAX_FOLLOWED} URIs"))
        user = ctx.request.scope.get("user") if ctx.request is not None else None
        bearer = str(getattr(getattr(user, "access_token", None), "token", ""))
        if self._streams[bearer] >= MAX_STREAMS:
            raise _refused(TooManyStreams(f"at most {MAX_STREAMS} listen streams per token; close one"))
        self._streams[bearer] += 1
        try:
            return await call_next(ctx)
        finally:
            self._streams[bearer] -= 1

    async def announce(self, uris: Iterable[str]) -> None:
        for uri in uris:
            for bus in self.buses:
                await bus.publish(ResourceUpdated(uri=uri))
            for key, session in list(self._legacy.get(uri, {}).items()):
                try:
                    await session.send_resource_updated(uri)
                except Exception:  # a closed session: forget it, keep telling the others
                    logger.debug("a subscribed session is gone; it is told no more", exc_info=True)
                    self._legacy[uri].pop(key, None)
                    self._followed.pop(key, None)

    async def observe(self, batch: Iterable[tuple[int, str]], whole: bool) -> None:
        """Announce every closing file a watcher batch shows appearing under the state root."""
        from watchfiles import Change

        found = {uri_of(self.state_root, Path(path)) for change, path in batch if change != Change.deleted}
        ended = [uri for uri in sorted(u for u in found if u) if await anyio.to_thread.run_sync(self._ends, uri)]
        await self.announce(ended)

    def _ends(self, uri: str) -> bool:
        """Whether the closing file ``uri`` names ends its task's claim (``uri_of`` made it from a valid ref)."""
        ref = uri_ref(uri)
        return ref is not None and ends_claim(self.state_root, ref, uri.rpartition("/")[2])


def _session_key(ctx: ServerRequestContext[Any, Any]) -> str:
    """The MCP session a request belongs to: its streamable HTTP session id (each request brings its own
    session object)."""
    headers = ctx.request.headers if ctx.request is not None else {}
    return str(headers.get("mcp-session-id") or id(ctx.session))


def _advertise(result: dict[str, Any]) -> None:
    """A 2025-era handshake says resources/subscribe is served (the SDK derives it from its own handlers)."""
    if result.get("protocolVersion") in MODERN_PROTOCOL_VERSIONS:
        return
    resources = result.get("capabilities", {}).get("resources")
    if isinstance(resources, dict):
        resources["subscribe"] = True

"""Who may call the team server: bearer-token verifiers (the SDK's ``TokenVerifier``), a limit
on refused requests per client address, and the Host/Origin policy the SDK's transport security
enforces.

Tokens never appear in a log line or an error text: a verifier keeps only a token's hash.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import math
import time
from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus
from urllib.parse import urlsplit

import anyio
from mcp.server.auth.provider import AccessToken, TokenVerifier
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from handoff_core.services.capabilities.token_index import TokenIndex
from server.config import LOOPBACK_HOSTS, Role

__all__ = ["REFUSALS", "Endpoint", "HostPolicy", "LeadVerifier", "RefusalLimit", "TaskVerifier"]

logger = logging.getLogger(__name__)

REFUSALS = (30, 5.0)  # refused requests a client address may make at once, and per second after that
_ADDRESSES = 10_000  # addresses and credentials remembered; the longest quiet is forgotten first
_HOLD_SECONDS = 1.0  # how long a 429 is held back before it is sent
_HELD = 8  # 429s held back at once per address; past that they are sent at once


def _fingerprint(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()[:16]


class LeadVerifier:
    def __init__(self, expected: str) -> None:
        self._expected = expected.encode()

    async def verify_token(self, token: str) -> AccessToken | None:
        if not hmac.compare_digest(self._expected, token.encode("utf-8", "replace")):
            return None
        return AccessToken(token=_fingerprint(token), client_id="lead", scopes=[])


class TaskVerifier:
    def __init__(self, index: TokenIndex) -> None:
        self._index = index

    async def verify_token(self, token: str) -> AccessToken | None:
        if not self._index.built:  # the first walk of the tree, once, off the event loop
            await anyio.to_thread.run_sync(self._index.build)
        ref = self._index.ref_of(token)  # a dictionary look-up: no disk, no lock, no thread
        if ref is None:
            return None
        return AccessToken(token=_fingerprint(token), client_id=f"task:{ref}", scopes=[], claims={"ref": str(ref)})


class RefusalLimit:
    """ASGI middleware: each 401 spends one of its client address's allowance (``REFUSALS``) and one
    of the presented credential's; a request whose address or credential has none left is answered
    429 before anything else runs, held back a second first (a few at a time per key), so a client
    that retries at once slows to a crawl — unless the token it presents is valid (``verifiers``):
    a valid token is always answered, however many others failed from the same address (a proxy,
    a NAT, a shared host).

    The SDK's ``TokenVerifier`` sees the token only, never the request, so the limit sits in
    front of the mounts and counts the answers they give. An address that never presents a wrong
    token is never slowed, however hard another address tries. The address is the one the ASGI
    server gives: behind a proxy, uvicorn rewrites it from ``X-Forwarded-For`` only for the proxy
    addresses the team server was given (``TeamOptions.proxy_addresses``).
    """

    def __init__(
        self,
        app: ASGIApp,
        refusals: tuple[int, float] = REFUSALS,
        clock: Callable[[], float] = time.monotonic,
        verifiers: tuple[TokenVerifier, ...] = (),
    ) -> None:
        self.app, (self.burst, self.rate), self.clock, self.verifiers = app, refusals, clock, verifiers
        self._left: OrderedDict[str, tuple[float, float]] = OrderedDict()  # key -> (allowance, at)
        self._held: Counter[str] = Counter()  # key -> 429s being held back now

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        token = _bearer(scope)
        keys = [str((scope.get("client") or ("unknown",))[0])]
        if token is not None:
            keys.append(f"credential {_fingerprint(token)}")
        left = min(self._allowance(key) for key in keys)
        if left < 1 and not await self._valid(token):
            await self._refuse(keys[0], math.ceil((1 - left) / self.rate), send)
            return

        async def counted(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == HTTPStatus.UNAUTHORIZED:
                for key in keys:
                    self._spend(key)
            await send(message)

        await self.app(scope, receive, counted)

    async def _valid(self, token: str | None) -> bool:
        return token is not None and any(
            [await verifier.verify_token(token) is not None for verifier in self.verifiers]
        )

    async def _refuse(self, key: str, retry_after: int, send: Send) -> None:
        if self._held[key] < _HELD:  # held a while first: a client that retries at once slows down
            self._held[key] += 1
            try:
                await anyio.sleep(min(retry_after, _HOLD_SECONDS))
            finally:
                self._held[key] -= 1
                if not self._held[key]:
                    del self._held[key]
        await _too_many(send, retry_after)

    def _spend(self, key: str) -> None:
        left = self._allowance(key) - 1
        if left < 1 <= left + 1 and not key.startswith("credential"):  # said once per address; never the token
            logger.warning("%s sent %d refused tokens; answering it 429 for a while", key, self.burst)
        self._left[key] = (left, self.clock())
        self._left.move_to_end(key)
        if len(self._left) > _ADDRESSES:
            self._left.popitem(last=False)

    def _allowance(self, key: str) -> float:
        left, at = self._left.get(key, (float(self.burst), 0.0))
        return min(float(self.burst), left + (self.clock() - at) * self.rate)


def _bearer(scope: Scope) -> str | None:
    """The bearer token the request presents (the board's ``?token=`` is its own page's business)."""
    for name, value in scope["headers"]:
        if name == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            return token.strip() if scheme.lower() == "bearer" and token.strip() else None
    return None


async def _too_many(send: Send, retry_after: int) -> None:
    body = json.dumps(
        {
            "error": "too_many_refusals",
            "error_description": "too many refused tokens from this address; "
            f"check the bearer token and retry after {retry_after} s",
        }
    ).encode()
    headers = [(b"content-type", b"application/json"), (b"retry-after", str(retry_after).encode())]
    await send({"type": "http.response.start", "status": 429, "headers": headers})
    await send({"type": "http.response.body", "body": body})


@dataclass(frozen=True)
class Endpoint:
    """Where the team server listens, as clients must name it (Host checks compare against this)."""

    host: str
    port: int
    scheme: str = "http"
    public_url: str | None = None  # behind a proxy: the URL clients use

    @property
    def base(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return (self.public_url or f"{self.scheme}://{host}:{self.port}").rstrip("/")

    def url(self, role: Role) -> str:
        return f"{self.base}/{role}/mcp"

    def hosts(self) -> tuple[str, ...]:
        """Every Host header a client may send, exactly: this port on the bound name and on each
        loopback name, and the public URL's host. No wildcard: another port, or anything after
        the port, is another server."""
        names = dict.fromkeys([self.host, *LOOPBACK_HOSTS])
        hosts = [f"[{name}]:{self.port}" if ":" in name else f"{name}:{self.port}" for name in names]
        if self.public_url:
            public = urlsplit(self.public_url)
            hosts.append(public.netloc)
            if public.port is None and public.hostname:  # a client may spell the default port out
                hosts.append(f"{public.netloc}:{443 if public.scheme == 'https' else 80}")
        return tuple(hosts)

    def origins(self) -> tuple[str, ...]:
        """Every Origin a browser page of this server sends, exactly (the board's own pages)."""
        origins = [f"{self.scheme}://{host}" for host in self.hosts() if not self._public(host)]
        if self.public_url:
            public = urlsplit(self.public_url)
            origins.append(f"{public.scheme}://{public.netloc}")
        return tuple(origins)

    def _public(self, host: str) -> bool:
        return self.public_url is not None and urlsplit(self.public_url).hostname == host.rsplit(":", 1)[0]

    def security(self) -> TransportSecuritySettings:
        """The same policy for the SDK's own transport check (``HostPolicy`` runs first, for every route)."""
        return TransportSecuritySettings(
            enable_dns_rebinding_protection=True, allowed_hosts=list(self.hosts()), allowed_origins=list(self.origins())
        )


class HostPolicy:
    """ASGI middleware: a request whose Host is not one of ``hosts`` gets 421, whose Origin (when
    sent) is not one of ``origins`` 403, before any route, the board's included."""

    def __init__(self, app: ASGIApp, hosts: tuple[str, ...], origins: tuple[str, ...]) -> None:
        self.app, self.hosts, self.origins = app, frozenset(hosts), frozenset(origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            headers = {name: value for name, value in scope["headers"] if name in (b"host", b"origin")}
            host, origin = headers.get(b"host", b"").decode("latin-1"), headers.get(b"origin")
            if host not in self.hosts:
                await _plain(send, 421, "this server is not reached by that Host name; use the URL it printed")
                return
            if origin is not None and origin.decode("latin-1") not in self.origins:
                await _plain(send, 403, "requests from pages of other origins are refused")
                return
        await self.app(scope, receive, send)


async def _plain(send: Send, status: int, text: str) -> None:
    body = text.encode()
    headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})

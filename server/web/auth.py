"""Who may call the team server: bearer-token verifiers (the SDK's ``TokenVerifier``) and the
Host/Origin policy the SDK's transport security enforces.

Tokens never appear in a log line or an error text: a verifier keeps only a token's hash.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from urllib.parse import urlsplit

import anyio
from mcp.server.auth.provider import AccessToken
from mcp.server.transport_security import TransportSecuritySettings

from handoff_core.services.token_index import TokenIndex
from server.config import Role

__all__ = ["Endpoint", "LeadVerifier", "TaskVerifier"]


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
        ref = await anyio.to_thread.run_sync(self._index.ref_of, token)
        if ref is None:
            return None
        return AccessToken(token=_fingerprint(token), client_id=f"task:{ref}", scopes=[], claims={"ref": str(ref)})


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

    def security(self) -> TransportSecuritySettings:
        host = f"[{self.host}]" if ":" in self.host else self.host
        hosts = [f"{host}:{self.port}", "127.0.0.1:*", "localhost:*", "[::1]:*"]
        origins = [f"{self.scheme}://{host}:{self.port}", "http://127.0.0.1:*", "http://localhost:*"]
        if self.public_url:
            public = urlsplit(self.public_url)
            hosts.append(public.netloc)
            origins.append(f"{public.scheme}://{public.netloc}")
        return TransportSecuritySettings(
            enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
        )

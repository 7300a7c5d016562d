"""Where a sandboxed executor without ``push`` may connect over TCP: the ports of the agent CLIs'
services (HTTPS), of the endpoints the launch's environment and the user's own CLI configuration
name, of the TASK's ``port:N`` resources, and any the launch's environment adds.
"""

from __future__ import annotations

import re

__all__ = ["ENDPOINT_VARIABLES", "HTTPS_PORT", "PORTS_VARIABLE", "codex_endpoints", "connect_ports", "url_port"]

# Where the agent CLIs' services are reached: the ports of these variables' URLs are connectable.
ENDPOINT_VARIABLES = (
    *("ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"),
    *("ALL_PROXY", "all_proxy"),
)
PORTS_VARIABLE = "HANDOFF_SANDBOX_PORTS"  # more connectable ports, comma-separated (the launch's environment)
HTTPS_PORT = 443


def url_port(url: str) -> int | None:
    if not url:
        return None
    from urllib.parse import urlsplit  # here: most launches name no endpoint

    try:
        parts = urlsplit(url if "://" in url else f"http://{url}")
        return parts.port or {"https": HTTPS_PORT, "http": 80}.get(parts.scheme)
    except ValueError:
        return None


def codex_endpoints(config: str) -> list[str]:
    """The model providers' URLs a Codex ``config.toml`` names (``model_providers.*.base_url``)."""
    import tomllib

    try:
        providers = tomllib.loads(config).get("model_providers") or {}
    except tomllib.TOMLDecodeError:
        return []
    if not isinstance(providers, dict):
        return []
    return [url for p in providers.values() if isinstance(p, dict) and isinstance(url := p.get("base_url"), str)]


def connect_ports(
    environ: dict[str, str], resources: tuple[str, ...], extra: tuple[int, ...], endpoints: tuple[str, ...] = ()
) -> tuple[int, ...]:
    """The TCP ports a launch without push may connect to: HTTPS (the CLIs' own services), the ports of
    the endpoints its environment and its CLIs' configuration name, the ports the TASK claims, and any
    the launch's environment adds (``HANDOFF_SANDBOX_PORTS``)."""
    ports = {HTTPS_PORT, *extra}
    ports |= {port for url in endpoints if (port := url_port(url)) is not None}
    ports |= {port for name in ENDPOINT_VARIABLES if (port := url_port(environ.get(name, ""))) is not None}
    ports |= {int(r.split(":", 1)[1]) for r in resources if re.fullmatch(r"port:[0-9]{1,5}", r)}
    ports |= {int(p) for p in environ.get(PORTS_VARIABLE, "").split(",") if p.strip().isdigit()}
    return tuple(sorted(port for port in ports if 0 < port < 65536))  # noqa: PLR2004 - TCP's ports

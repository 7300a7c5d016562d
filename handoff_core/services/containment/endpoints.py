"""Where a sandboxed executor without ``push`` may connect over TCP: the ports of the agent CLIs'
services (HTTPS), of the endpoints the launch's environment and the user's own CLI configuration
name, of the TASK's ``port:N`` resources, and any the launch's environment adds.
"""

from __future__ import annotations

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
    """The URLs a Codex ``config.toml`` names as ``base_url`` (its model providers'), read line by line:
    only their ports matter here, and a launch does not load a TOML parser for them."""
    found = []
    for raw in config.splitlines():
        key, _, value = raw.partition("=")
        if key.strip() in ("base_url", '"base_url"') and value.strip().startswith('"'):
            found.append(value.strip().strip('"'))
    return found


def connect_ports(
    environ: dict[str, str], resources: tuple[str, ...], extra: tuple[int, ...], endpoints: tuple[str, ...] = ()
) -> tuple[int, ...]:
    """The TCP ports a launch without push may connect to: HTTPS (the CLIs' own services), the ports of
    the endpoints its environment and its CLIs' configuration name, the ports the TASK claims, and any
    the launch's environment adds (``HANDOFF_SANDBOX_PORTS``)."""
    ports = {HTTPS_PORT, *extra}
    ports |= {port for url in endpoints if (port := url_port(url)) is not None}
    ports |= {port for name in ENDPOINT_VARIABLES if (port := url_port(environ.get(name, ""))) is not None}
    ports |= {int(r[5:]) for r in resources if r.startswith("port:") and r[5:].isdigit() and len(r) <= 10}  # noqa: PLR2004
    ports |= {int(p) for p in environ.get(PORTS_VARIABLE, "").split(",") if p.strip().isdigit()}
    return tuple(sorted(port for port in ports if 0 < port < 65536))  # noqa: PLR2004 - TCP's ports

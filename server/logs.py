"""The product's log: the standard ``logging`` module, one logger per package, on stderr.

Quiet by default (warnings and errors only); ``--log-level`` or ``HANDOFF_LOG_LEVEL`` asks for more.
Never stdout: on stdio that stream is the MCP protocol. The SDK's own loggers stay at warning
whatever is asked here, so no request body (which may carry a report token) is ever logged; the
product's lines name refs, paths and codes, never a token or a secret.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Final, Literal, get_args

from handoff_core.errors import ConfigError

__all__ = ["LEVELS", "PACKAGES", "LogLevel", "configure"]

LogLevel = Literal["debug", "info", "warning", "error"]
LEVELS: Final[tuple[LogLevel, ...]] = get_args(LogLevel)
PACKAGES: Final = ("handoff_core", "server")
DEFAULT_LEVEL: Final[LogLevel] = "warning"
_FORMAT: Final = "handoff-mcp %(levelname)s %(name)s: %(message)s"


def _level(given: str | None) -> LogLevel:
    value = (given or os.environ.get("HANDOFF_LOG_LEVEL") or DEFAULT_LEVEL).lower()
    for level in LEVELS:
        if value == level:
            return level
    raise ConfigError(f"log level {value!r} is unknown: pass --log-level or HANDOFF_LOG_LEVEL as one of {LEVELS}")


def configure(given: str | None = None) -> LogLevel:
    """Send the product's loggers to stderr at the level asked (flag, then environment, then warning)."""
    level = _level(given)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(_FORMAT))
    for name in PACKAGES:
        logger = logging.getLogger(name)
        logger.handlers = [handler]  # configured again (a test, a second main()): one handler, not two
        logger.setLevel(level.upper())
        logger.propagate = False  # the SDK configures the root logger for its own lines
    return level

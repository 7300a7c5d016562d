"""The ``handoff-mcp`` command."""

from __future__ import annotations

import sys
from collections.abc import Sequence

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["guard"]:  # a hook runs on every write: it loads only what judging needs
        from server.cli.guard import main as guard_main

        return guard_main(args[1:])
    from server.cli.main import main as cli_main

    return cli_main(args)

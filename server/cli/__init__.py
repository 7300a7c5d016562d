"""The ``handoff-mcp`` command."""

from __future__ import annotations

import sys
from collections.abc import Sequence

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["guard"]:
        from server.cli.agent_hook import hook_mode, run_hook

        if hook_mode(args[1:]):  # on every event: only what a decision needs
            return run_hook(args[1:])
        from server.cli.guard import main as guard_main

        return guard_main(args[1:])
    from server.cli.command_line import main as cli_main

    return cli_main(args)

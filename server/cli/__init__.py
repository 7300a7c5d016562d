"""The ``handoff-mcp`` command."""

from __future__ import annotations

import sys
from collections.abc import Sequence

__all__ = ["hook_mode", "main"]


def hook_mode(argv: list[str]) -> bool:
    """``guard`` as the agent CLIs' hook: ``--ref`` without the git hook's flags."""
    return any(a == "--ref" or a.startswith("--ref=") for a in argv) and not {
        "--install-git-hook",
        "--pre-commit",
        "--uninstall",
    }.intersection(argv)


def _with_roots(argv: list[str]) -> list[str]:
    """The hook's flags with both roots explicit (discovered as ``serve`` would, only when not given)."""
    given = {a.split("=", 1)[0] for a in argv}
    if {"--project-root", "--state-root"} <= given or "--url" in given:  # --url: no tree on this machine
        return argv
    from handoff_core.errors import HandoffError
    from server.config import settings_from

    named = {a: argv[i + 1] for i, a in enumerate(argv[:-1]) if a in ("--project-root", "--state-root")}
    try:
        settings = settings_from(
            "executor", named.get("--project-root"), named.get("--state-root"), role_required=False
        )
    except HandoffError:
        return argv  # the hook answers the missing roots as a usage error
    rest = [a for i, a in enumerate(argv) if a not in named and (i == 0 or argv[i - 1] not in named)]
    return [*rest, "--project-root", str(settings.project_root), "--state-root", str(settings.state_root)]


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["guard"] and hook_mode(args[1:]):  # on every event: only what a decision needs
        from handoff_core.services.evidence.hook import main as hook_main

        return hook_main(_with_roots(args[1:]))
    if args[:1] == ["guard"]:
        from server.cli.guard import main as guard_main

        return guard_main(args[1:])
    from server.cli.main import main as cli_main

    return cli_main(args)

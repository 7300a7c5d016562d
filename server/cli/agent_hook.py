"""``handoff-mcp guard`` as the agent CLIs' hook: which arguments ask for it, and the hook run with both
roots explicit.

Stdlib only at import: the hook runs before every write an executor makes, so the command line hands
it to ``handoff_core.services.evidence.hook`` before any parser loads.
"""

from __future__ import annotations

__all__ = ["hook_mode", "run_hook"]


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


def run_hook(argv: list[str]) -> int:
    """The hook on this process's stdin and stdout, ``argv`` being the flags after ``guard``."""
    from handoff_core.services.evidence.hook import main as hook_main

    return hook_main(_with_roots(argv))

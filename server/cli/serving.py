"""``handoff-mcp serve`` (stdio, or ``--http`` for the team) and ``board``: the commands that run a server."""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from handoff_core.contract.values import visible
from server.config import Settings, TeamOptions
from server.mcp.services import open_store

__all__ = ["board", "collector_paused", "freeze_start", "serve", "serve_team", "serving_line"]


# Starting a server is importing the SDK and the server's modules: objects that live as long as the
# process, and almost no garbage. The cyclic collector's passes over them while they are made are
# wasted (the bench: about 50 ms of a lead's half-second start-up), and so is every later full pass
# over them. So ``serve`` starts with the collector paused, and before it answers
# anything, moves what start-up made out of every collection (``gc.freeze``) and lets it run again:
# the few cycles start-up left (under 1 MB) are kept, not collected.
@contextmanager
def collector_paused() -> Iterator[None]:
    """The collector paused until ``freeze_start``, or until the start ends without serving."""
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def freeze_start() -> None:
    """What the server's start made, out of every later collection; the collector runs again."""
    gc.freeze()
    gc.enable()


def serve_team(settings: Settings, options: TeamOptions) -> int:
    from server.web.team import run_team

    freeze_start()  # its imports are done; the servers it builds next are collected as any later object
    run_team(settings, options)
    return 0


def serving_line(settings: Settings) -> str:
    return (
        f"handoff-mcp: {settings.role} server, project root {settings.project_root}, state root "
        f"{settings.state_root}; waiting for an MCP client on stdin (an agent CLI starts it; Ctrl-C stops it)"
    )


def serve(settings: Settings) -> int:
    from server.mcp.app import build_server
    from server.mcp.nesting import guard_stdin

    if settings.note:  # stderr: a client shows it in its server log, never in the protocol stream
        print(f"handoff-mcp: {settings.note}", file=sys.stderr)
    if sys.stdin.isatty():  # a person started it by hand: say it is waiting, not hung (asked before stdin is wrapped)
        print(visible(serving_line(settings)), file=sys.stderr, flush=True)
    guard_stdin()  # a message nested too deep is answered, not dropped by the SDK's parser
    server = build_server(settings)
    freeze_start()
    server.run("stdio")
    return 0


def board(settings: Settings, port: int) -> int:
    from server.web.board import run_board
    from server.web.board_model import BoardModel

    model = BoardModel(open_store(settings, anchored=True).queries, settings.writer_cap)
    model.load()
    run_board(model, port)
    return 0

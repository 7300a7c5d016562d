"""``handoff-mcp serve`` (stdio, or ``--http`` for the team) and ``board``: the commands that run a server."""

from __future__ import annotations

import sys

from handoff_core.contract.values import visible
from server.config import Settings, TeamOptions
from server.mcp.services import open_store

__all__ = ["board", "serve", "serve_team", "serving_line"]


def serve_team(settings: Settings, options: TeamOptions) -> int:
    from server.web.team import run_team

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
    build_server(settings).run("stdio")
    return 0


def board(settings: Settings, port: int) -> int:
    from server.web.board import run_board
    from server.web.board_model import BoardModel

    model = BoardModel(open_store(settings, anchored=True).queries, settings.writer_cap)
    model.load()
    run_board(model, port)
    return 0

"""``handoff-mcp``: the parser, and the dispatch to each command (``serve`` the default) in its module.

Only ``serve`` imports the MCP SDK; the other commands stay as light as the core. Each command's
module is imported when it runs: ``serve`` starts without the others' imports.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import sys
import threading
from collections.abc import Sequence
from dataclasses import replace

from handoff_core.contract.ids import parse_ref
from handoff_core.errors import ConfigError, HandoffError
from handoff_core.layout import COORDINATION_MODES, SKILLS_DIRS
from server import logs
from server.cli.serving import board, collector_paused, serve, serve_team
from server.config import ROLES, Settings, TeamOptions, settings_from
from server.logs import LEVELS

__all__ = ["main"]

COMMANDS = (
    "serve",
    "validate",
    "status",
    "token",
    "doctor",
    "config",
    "board",
    "package",
    "receive",
    "guard",
    "sandbox",
    "trust-codex-hooks",
    "coordination",
    "verify",
)


def _parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line. ``only``: the command that runs, the one whose arguments are built (argparse
    builds every argument it is given, and the server's start waits for them); None: every command's."""
    parser = argparse.ArgumentParser(
        prog="handoff-mcp", description="Handoff tools for coding agents over MCP (stdio, or HTTP for a team)."
    )
    parser.add_argument("--version", action="version", version=f"handoff-mcp {_version()}")
    commands = parser.add_subparsers(dest="command", required=True)
    for name, text in (
        ("serve", "run the MCP server on stdio (the default command)"),
        ("status", "print every task's derived state as a table"),
        ("token", "print a task's report token again (lead)"),
        ("doctor", "list leftover temp files and empty rounds; --fix removes those older than a minute"),
        ("config", "print a client's MCP configuration for this project (claude-code, codex, workers)"),
        ("board", "serve the live board page on the loopback; prints a one-time login URL"),
        ("package", "seal a task as an outbound ZIP for an external web channel"),
        ("receive", "persist, check and (only if safe) extract an external return"),
        ("coordination", "save the project's coordination choice (herdr, orca, cli, or lead: none for now)"),
        ("trust-codex-hooks", "trust, in Codex, the hooks that run this server's guard (and only those)"),
        ("verify", "replay a task's acceptance checks at its reported checkpoint, sandboxed (lead); exit 0: passed"),
    ):
        sub = commands.add_parser(name, help=text)
        if only in (None, name):  # a command's arguments, built only when it runs (or for --help)
            _arguments(sub, name)
    commands.add_parser("validate", help="validate one handoff (same as handoff-validate)", add_help=False)
    guard_help = "judge an agent CLI's tool call or a commit against the task's scope (its hooks run it)"
    commands.add_parser("guard", help=guard_help, add_help=False)
    sandbox_help = (
        "launch an executor's CLI contained by the kernel in what its TASK grants: sandbox --ref REF … -- CMD"
    )
    commands.add_parser("sandbox", help=sandbox_help, add_help=False)
    return parser


def _arguments(sub: argparse.ArgumentParser, name: str) -> None:
    sub.add_argument("--role", choices=ROLES, help="default: $HANDOFF_ROLE")
    sub.add_argument("--project-root", help="default: $HANDOFF_PROJECT_ROOT or the current directory")
    sub.add_argument("--state-root", help="default: $HANDOFF_STATE_ROOT or <project>/speculo/.speculo")
    sub.add_argument("--secret-file", help="default: $HANDOFF_SECRET_FILE or ~/.config/handoff-mcp/secret")
    sub.add_argument("--log-level", choices=LEVELS, help="stderr log; default: $HANDOFF_LOG_LEVEL or warning")
    if name == "status":
        sub.add_argument("--change")
        sub.add_argument("--session")
        sub.add_argument("--since", help="only tasks whose files appeared since (ISO 8601, e.g. 2026-12-01T09:00Z)")
        sub.add_argument("--json", action="store_true", help="one JSON object on stdout, for scripts and CI")
        sub.add_argument(
            "--archive-check", action="store_true", help="with --change: exit 1 naming the writers to end first"
        )
    if name == "serve":
        _http_arguments(sub)
        sub.add_argument("--ref", help="an executor's one task: every call naming another is refused")
    if name == "token":
        sub.add_argument("ref", nargs="?", help="change/session/task")
        sub.add_argument("--lead", action="store_true", help="the Lead's bearer token for the HTTP team server")
    if name == "config":
        from server.client_config import CLIENTS

        sub.add_argument("--client", choices=CLIENTS, default="claude-code")
        sub.add_argument(
            "--command", dest="command_path", help="the server command to write (default: this installation's)"
        )
        sub.add_argument("--url", help="an HTTP team server endpoint instead of a command")
        sub.add_argument("--token", help="with --url: the bearer token (a task's report token, or the Lead's)")
        sub.add_argument("--ref", help="an executor's task: wire in its guard hook (handoff-mcp guard)")
    if name == "board":
        sub.add_argument("--port", type=int, default=8766, help="default 8766")
    if name in ("package", "receive"):
        _exchange_arguments(sub, name)
    if name == "coordination":
        sub.add_argument("action", choices=("save",))
        sub.add_argument("mode", choices=COORDINATION_MODES)
        sub.add_argument("--skills-dir", choices=SKILLS_DIRS, help="herdr and orca: where the Skill is installed")
        sub.add_argument("--dry-run", action="store_true", help="print what would be written; write nothing")
    if name == "trust-codex-hooks":
        sub.add_argument("--codex", help="the codex command (default: codex on PATH)")
    if name == "doctor":
        sub.add_argument("--fix", action="store_true", help="remove them (under the state-root lock)")
    if name == "verify":
        sub.add_argument("--ref", required=True, help="change/session/task")
        sub.add_argument("--json", action="store_true", help="one JSON object on stdout, for scripts and CI")


def _http_arguments(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--http", action="store_true", help="serve the team over streamable HTTP (both roles)")
    sub.add_argument("--host", default="127.0.0.1", help="with --http (default 127.0.0.1)")
    sub.add_argument("--port", type=int, default=8765, help="with --http (default 8765)")
    sub.add_argument("--tls-cert", help="with --http: certificate file (uvicorn's TLS)")
    sub.add_argument("--tls-key", help="with --http: key file")
    sub.add_argument("--behind-proxy", action="store_true", help="with --http: a TLS proxy in front (see README)")
    sub.add_argument("--public-url", help="with --behind-proxy: the URL clients use")
    sub.add_argument(
        "--proxy-address", action="append", default=[], dest="proxy_addresses",
        help="with --behind-proxy: the proxy's address, whose X-Forwarded-For is believed (repeatable)",
    )  # fmt: skip


def _exchange_arguments(sub: argparse.ArgumentParser, name: str) -> None:
    sub.add_argument("--scope", required=True, help="scope id ([A-Za-z0-9._-])")
    sub.add_argument("--dispatch", required=True, help="dispatch id; a new one for every new package")
    if name == "package":
        sub.add_argument("ref", help="change/session/task")
        sub.add_argument("files", nargs="*", help="project-relative files or folders to send")
        sub.add_argument("--allowed-domain", action="append", default=[], dest="domains")
        return
    sub.add_argument("--task", required=True, help="the task id the dispatch was packaged for")
    sub.add_argument("--attempt", required=True, help="attempt id; a new one for every return")
    given = sub.add_mutually_exclusive_group(required=True)
    given.add_argument("--file", help="the downloaded ZIP")
    given.add_argument("--text-file", help="a text-only answer, saved verbatim")
    sub.add_argument(
        "--accept", action="append", default=[], metavar="PATH",
        help="a file of the return (or FOLDER/ for the files below it) to extract, after reading it in "
        "the return ZIP; a held file only by its own name; repeatable",
    )  # fmt: skip


def _settings(args: argparse.Namespace, *, role_required: bool) -> Settings:
    return settings_from(args.role, args.project_root, args.state_root, args.secret_file, role_required=role_required)


def _serve(settings: Settings, args: argparse.Namespace) -> int:
    if args.ref and (args.http or settings.role != "executor"):
        raise ConfigError("--ref scopes a stdio executor to its task: give it with --role executor, without --http")
    if args.http:
        return serve_team(settings, _team_options(args))
    return serve(replace(settings, task=parse_ref(args.ref)) if args.ref else settings)


def _command(settings: Settings, args: argparse.Namespace) -> int:
    """Any command but ``serve``, from its own module."""
    from server.cli.exchange import exchange
    from server.cli.project_setup import config, coordination, token
    from server.cli.status import doctor, status

    if args.command == "status":
        return status(settings, args.change, args.session, args.since, args.json, archive_check=args.archive_check)
    if args.command == "doctor":
        return doctor(settings, args.fix)
    if args.command in ("package", "receive"):
        return exchange(settings, args)
    if args.command == "coordination":
        return coordination(settings, args.mode, args.skills_dir, args.dry_run)
    if args.command == "board":
        return board(settings, args.port)
    if args.command == "trust-codex-hooks":
        return _trust_codex_hooks(settings, args)
    if args.command == "verify":
        return _verify(settings, args)
    if args.command == "config":
        return config(settings, args.client, args.command_path, args.url, args.token, args.ref)
    return token(settings, args.ref, args.lead)


def _team_options(args: argparse.Namespace) -> TeamOptions:
    return TeamOptions(
        host=args.host,
        port=args.port,
        tls_cert=args.tls_cert,
        tls_key=args.tls_key,
        behind_proxy=args.behind_proxy,
        public_url=args.public_url,
        proxy_addresses=tuple(args.proxy_addresses),
    )


def _version() -> str:
    """The installed distribution's version (package metadata): one home, pyproject.toml."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("handoff-mcp")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown (not installed)"


def _preload() -> None:
    with contextlib.suppress(Exception):  # serve imports it again, and reports what failed
        importlib.import_module("server.mcp.app")


def _import_server_meanwhile() -> None:
    """Most of ``serve``'s start is importing the SDK: begun now in a thread, it runs while the settings
    wait for git (another process: the GIL is free) instead of after them."""
    threading.Thread(target=_preload, name="handoff-mcp-import", daemon=True).start()


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if not args_list or args_list[0] not in (*COMMANDS, "-h", "--help", "--version"):
        args_list.insert(0, "serve")
    if args_list[0] == "validate":
        from handoff_core import validator

        return validator.main(args_list[1:])
    if args_list[0] == "sandbox":  # its own parser: everything after -- is the command's
        import os

        from handoff_core.services.containment.launch import run

        return run(args_list[1:], dict(os.environ))
    if args_list[0] == "guard":  # its own parser: a hook's argument error must not exit 2, which reads as a deny
        from server.cli.guard import main as guard_main

        return guard_main(args_list[1:])
    if args_list[0] == "serve":
        with collector_paused():  # until serve freezes what its start made (serving.freeze_start)
            _import_server_meanwhile()
            return _run(args_list)
    return _run(args_list)


def _run(args_list: list[str]) -> int:
    args = _parser(args_list[0] if args_list[0] in COMMANDS else None).parse_args(args_list)
    try:
        logs.configure(args.log_level)
        settings = _settings(args, role_required=args.command == "serve" and not getattr(args, "http", False))
        if args.command == "serve":
            return _serve(settings, args)
        return _command(settings, args)
    except HandoffError as exc:
        print(f"handoff-mcp: {exc}", file=sys.stderr)
        return 2


def _trust_codex_hooks(settings: Settings, args: argparse.Namespace) -> int:
    from server.cli.codex_trust import trust_codex_hooks  # here: only this command asks Codex

    return trust_codex_hooks(settings.project_root, args.codex)


def _verify(settings: Settings, args: argparse.Namespace) -> int:
    from server.cli.verify import verify  # here: the replay's modules load only for it

    return verify(settings, args.ref, args.json)


if __name__ == "__main__":
    sys.exit(main())

"""``handoff-mcp``: serve (default, stdio), validate, status, token, doctor, config.

Only ``serve`` imports the MCP SDK; the other commands stay as light as the core.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from handoff_core import validator as validate_cli
from handoff_core.contract.ids import parse_ref
from handoff_core.contract.values import visible
from handoff_core.errors import ConfigError, HandoffError
from handoff_core.layout import CHANGES
from handoff_core.services.capabilities.tokens import lead_token, load_secret, reprinted_token
from handoff_core.services.project.coordination_setup import MODES, SKILLS_DIRS, plan_choice, save_choice
from handoff_core.services.rules.ownership import writer_slots
from server import logs
from server.client_config import CLIENTS, Client, http_launch, launch_for, render
from server.config import ROLES, Settings, TeamOptions, settings_from
from server.logs import LEVELS
from server.mcp.services import open_store

if TYPE_CHECKING:
    from handoff_core.services.tree.status import TaskStatus

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
    "coordination",
)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="handoff-mcp", description="Handoff tools for coding agents over MCP (stdio, or HTTP for a team)."
    )
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
    ):
        sub = commands.add_parser(name, help=text)
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
        if name == "serve":
            _http_arguments(sub)
        if name == "token":
            sub.add_argument("ref", nargs="?", help="change/session/task")
            sub.add_argument("--lead", action="store_true", help="the Lead's bearer token for the HTTP team server")
        if name == "config":
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
            sub.add_argument("mode", choices=MODES)
            sub.add_argument("--skills-dir", choices=SKILLS_DIRS, help="herdr and orca: where the Skill is installed")
            sub.add_argument("--dry-run", action="store_true", help="print what would be written; write nothing")
        if name == "doctor":
            sub.add_argument("--fix", action="store_true", help="remove them (under the state-root lock)")
    commands.add_parser("validate", help="validate one handoff (same as handoff-validate)", add_help=False)
    return parser


def _http_arguments(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--http", action="store_true", help="serve the team over streamable HTTP (both roles)")
    sub.add_argument("--host", default="127.0.0.1", help="with --http (default 127.0.0.1)")
    sub.add_argument("--port", type=int, default=8765, help="with --http (default 8765)")
    sub.add_argument("--tls-cert", help="with --http: certificate file (uvicorn's TLS)")
    sub.add_argument("--tls-key", help="with --http: key file")
    sub.add_argument("--behind-proxy", action="store_true", help="with --http: a TLS proxy in front (see README)")
    sub.add_argument("--public-url", help="with --behind-proxy: the URL clients use")


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


def _settings(args: argparse.Namespace, *, role_required: bool) -> Settings:
    return settings_from(args.role, args.project_root, args.state_root, args.secret_file, role_required=role_required)


def _team_options(args: argparse.Namespace) -> TeamOptions:
    return TeamOptions(
        host=args.host,
        port=args.port,
        tls_cert=args.tls_cert,
        tls_key=args.tls_key,
        behind_proxy=args.behind_proxy,
        public_url=args.public_url,
    )


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


_HOUR, _DAY = 60, 24 * 60  # in minutes


def _age(seconds: float) -> str:
    minutes = int(seconds // 60)
    return f"{minutes // _DAY}d" if minutes >= _DAY else f"{minutes // _HOUR}h" if minutes >= _HOUR else f"{minutes}m"


def _status_json(settings: Settings, every: list[TaskStatus], tasks: list[TaskStatus]) -> str:
    now = time.time()
    claims = sum(1 for task in every if task.claims_writer)  # a filter never frees a slot
    slots = writer_slots(claims, settings.writer_cap)
    rows = [
        {
            "ref": str(t.ref),
            "kind": t.kind or "",
            "state": t.label,
            "age_seconds": round(t.age(now), 1),
            "claim": t.claim,
            "has_locator": t.has_locator,
            "proof": t.proof or "",
            "problems": [*t.problems, *(f"temp {n}" for n in t.temp_files)],
        }
        for t in tasks
    ]
    body = {"state_root": str(settings.state_root), "tasks": rows, "writer_claims": claims}
    return json.dumps({**body, "free_writer_slots": slots.free, "writers": slots.describe()}, ensure_ascii=True)


def status(
    settings: Settings, change: str | None, session: str | None, since: str | None = None, as_json: bool = False
) -> int:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from handoff_core.services.tree.status_page import changed_since

    every = open_store(settings).queries.status(change, session)
    tasks = changed_since(every, since) if since else every
    if as_json:
        print(_status_json(settings, every, tasks))
        return 0
    now = time.time()
    table = Table("ref", "kind", "state", "age", "claim", "locator", "proof", "problems", title="handoff status")
    for task in tasks:
        problems = "; ".join(task.problems + tuple(f"temp {n}" for n in task.temp_files))
        cells = [str(task.ref), task.kind or "?", task.label, _age(task.age(now)), task.claim]
        # Names come from the tree: shown as plain text (no rich markup), control characters spelled out.
        extra = ["yes" if task.has_locator else "", task.proof or "", problems]
        table.add_row(*(Text(visible(cell)) for cell in [*cells, *extra]))
    console = Console(width=200)
    if not every:
        console.print(Text(f"no tasks under {visible(str(settings.state_root.joinpath(*CHANGES)))}"))
        return 0
    console.print(table if tasks else Text(f"no task changed since {visible(since or '')}"))
    claims = sum(1 for task in every if task.claims_writer)  # a filter never frees a slot
    console.print(f"writer claims: {claims}; {writer_slots(claims, settings.writer_cap).describe()}")
    return 0


def token(settings: Settings, ref: str | None, lead: bool) -> int:
    if settings.role != "lead":
        raise ConfigError(
            "token prints a task's report token, which only the Lead hands out; this shell is configured "
            "as executor (--role or HANDOFF_ROLE): run it where the Lead works"
        )
    if lead:
        print(lead_token(load_secret(settings.secret_file, settings.project_root, create=False), settings.state_root))
        return 0
    if ref is None:
        raise ConfigError("name a task (token CHANGE/SESSION/TASK), or ask for the Lead's token with --lead")
    parsed = parse_ref(ref)
    task, _ = open_store(settings).queries.read_task(parsed)
    secret_file, roots = settings.secret_file, (settings.project_root, settings.state_root)
    print(reprinted_token(secret_file, *roots, parsed, task.token_check))
    print(visible(f"handoff-mcp: derived from the secret {secret_file}"), file=sys.stderr)
    return 0


def doctor(settings: Settings, fix: bool) -> int:
    store = open_store(settings)
    found = store.queries.leftovers()
    for item in found:
        print(visible(item.describe()))
    if not found:
        print(visible(f"nothing left over under {settings.state_root}"))
    if fix and found:
        removed = store.remove_leftovers()
        print(f"removed {len(removed)} of {len(found)} (younger ones may still be in flight; run again later)")
    return 0


PROJECT_APPROVAL = (
    'a project server (.mcp.json, or claude mcp add --scope project) stays "Pending approval" until you approve '
    "it: start claude in the project and accept handoff (or approve it in /mcp), or add "
    '"enabledMcpjsonServers": ["handoff"] to .claude/settings.local.json; --scope local needs no approval'
)


def config(
    settings: Settings, client: Client, command: str | None, url: str | None, token: str | None, ref: str | None = None
) -> int:
    if url is not None and not token:
        raise ConfigError("--url needs --token: the task's report token for an executor, the Lead token for the Lead")
    if ref is not None:
        parse_ref(ref)
    launch = http_launch(settings.role, url, token or "") if url else launch_for(settings, settings.role, command, ref)
    print(render(launch, client), end="")
    trust = (
        "Codex runs the guard hook only once trusted (/hooks), or headless with exec --dangerously-bypass-hook-trust"
    )
    for note in (settings.note, launch.note, trust if launch.guard and client.startswith("codex") else None):
        if note:
            print(f"handoff-mcp: {note}", file=sys.stderr)
    if client in ("claude-code", "claude-code-cli") and settings.role == "lead" and url is None:
        print(f"handoff-mcp: {PROJECT_APPROVAL}", file=sys.stderr)
    return 0


def exchange(settings: Settings, args: argparse.Namespace) -> int:
    from handoff_core.contract.exchange import Channel
    from handoff_core.services.exchange.outbound import package_dispatch
    from handoff_core.services.exchange.returns import receive_file
    from server.mcp.tools.exchange import private_files

    store = open_store(settings)
    if args.command == "package":
        task, _ = store.queries.read_task(parse_ref(args.ref))
        channel = Channel(tuple(args.domains))
        sealed = package_dispatch(
            settings.project_root, task, args.scope, args.dispatch, args.files, channel, store.clock()
        )
        print(f"{sealed.locator}  {sealed.size} bytes  sha256 {sealed.sha256}")
        for item in sealed.excluded:
            print(visible(f"  excluded {item['path']}: {item['reason']}"))
        return 0
    ids = (settings.project_root, args.scope, args.task, args.dispatch, args.attempt)
    path = str(Path(args.file or args.text_file).absolute())
    got = receive_file(*ids, path=path, forbidden=private_files(settings), is_text=bool(args.text_file))
    print(
        f"raw {got.raw_locator} (sha256 {got.raw_sha256}); return {got.return_locator}; {got.extracted_files} file(s)"
    )
    return 0


def coordination(settings: Settings, mode: str, skills_dir: str | None, dry_run: bool = False) -> int:
    plan = plan_choice(settings.state_root, mode, skills_dir)
    if dry_run:  # the seed's plan: the choice and the expected file, nothing written
        print(visible(f"would {'save' if plan.changed else 'reuse'} {plan.path}:"))
        print(visible(plan.candidate.decode()), end="")
        return 0
    saved = save_choice(settings.state_root, settings.project_root, plan)
    print(visible(f"{saved.outcome} {saved.path}: {json.dumps(saved.defaults)}"))
    if saved.skill != "not needed":
        print(visible(f"skill {saved.defaults['guide']}: {saved.skill}"))
    if saved.next_step:
        print(visible(f"to install it: {saved.next_step} (nothing was installed)"))
    return 0


def board(settings: Settings, port: int) -> int:
    from server.web.board import run_board
    from server.web.board_model import BoardModel

    model = BoardModel(open_store(settings).queries, settings.writer_cap)
    model.load()
    run_board(model, port)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if not args_list or args_list[0] not in (*COMMANDS, "-h", "--help"):
        args_list.insert(0, "serve")
    if args_list[0] == "validate":
        return validate_cli.main(args_list[1:])
    if args_list[0] == "guard":  # its own parser: a hook's argument error must not exit 2, which reads as a deny
        from server.cli.guard import main as guard_main

        return guard_main(args_list[1:])
    args = _parser().parse_args(args_list)
    try:
        logs.configure(args.log_level)
        settings = _settings(args, role_required=args.command == "serve" and not getattr(args, "http", False))
        if args.command == "serve" and args.http:
            return serve_team(settings, _team_options(args))
        if args.command == "serve":
            return serve(settings)
        if args.command == "status":
            return status(settings, args.change, args.session, args.since, args.json)
        if args.command == "doctor":
            return doctor(settings, args.fix)
        if args.command in ("package", "receive"):
            return exchange(settings, args)
        if args.command == "coordination":
            return coordination(settings, args.mode, args.skills_dir, args.dry_run)
        if args.command == "board":
            return board(settings, args.port)
        if args.command == "config":
            return config(settings, args.client, args.command_path, args.url, args.token, args.ref)
        return token(settings, args.ref, args.lead)
    except HandoffError as exc:
        print(f"handoff-mcp: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

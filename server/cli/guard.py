"""``handoff-mcp guard``: the live evidence layer for the agent CLIs and git.

``guard --ref REF --task-sha256 HEX [--event pre-tool|post-tool|stop] [--client claude-code|codex]``
is the agent CLIs' hook: ``server.cli.agent_hook`` hands it to ``handoff_core.services.evidence.hook`` before
this parser loads (the event on stdin, the answer on stdout in the form both CLIs document).
``guard --install-git-hook`` installs the pre-commit hook (``--ref`` records, in a linked worktree,
which task it works for and its TASK's SHA-256; ``--uninstall`` removes it); the hook runs ``guard
--pre-commit``, which refuses a commit staging a path outside that task's scope, or any commit once
a recorded TASK changed. An argument error exits 64 with the usage on stderr: never 0 (an allow)
nor 2 (a deny).
``guard --lead`` is the Lead's own session's hook: it denies a write to a path an outstanding
executor holds (``lead_guard``); in a tree no task works for (the main tree), the pre-commit hook
refuses a commit staging such a path. Both read what a task holds with the Lead's secret
(``--secret-file``, else as ``serve`` finds it) when there is one: a TASK that is not the one
published holds everything.

On a machine without the Lead's tree, ``--url URL`` (the team server's executor endpoint) with
``--task-sha256 HEX`` reads the task from the team server (``remote_task``) with the report token
found in the variable ``--token-env`` names (never in argv), and judges paths in the clone the
hook runs in; the pre-commit hook installed with ``--url`` does the same at commit time.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from handoff_core.contract.ids import parse_ref
from handoff_core.errors import ConfigError, HandoffError, WorkspaceRefused
from handoff_core.files.task_dir import Roots
from handoff_core.layout import REF_VARIABLE, TOKEN_VARIABLE
from handoff_core.services.evidence import guard
from handoff_core.services.evidence.hook_call import Decision
from server.cli.agent_hook import hook_mode, run_hook

if TYPE_CHECKING:
    from handoff_core.contract.anchor import TaskAnchor
    from handoff_core.services.evidence.remote_task import RemoteTask

__all__ = ["USAGE_EXIT", "main"]

USAGE_EXIT = 64  # EX_USAGE: a hook CLI reads neither an allow (0) nor a deny (2) into it


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        print(f"handoff-mcp guard: {message}", file=sys.stderr)
        sys.exit(USAGE_EXIT)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="handoff-mcp guard", description="Deny writes outside a handoff task's scope.")
    parser.add_argument("--ref", help="change/session/task: the task whose scope is enforced")
    parser.add_argument("--event", choices=("pre-tool", "post-tool", "stop"), default="pre-tool")
    parser.add_argument("--client", choices=("claude-code", "codex"), help="the agent CLI running the hook")
    parser.add_argument("--lead", action="store_true", help="the Lead's own session: deny paths executors hold")
    parser.add_argument("--project-root", help="default: $HANDOFF_PROJECT_ROOT or the current directory")
    parser.add_argument("--state-root", help="default: $HANDOFF_STATE_ROOT or <project>/speculo/.speculo")
    parser.add_argument(
        "--secret-file", help="with --lead or in the main tree: the Lead's token secret (default: as serve finds it)"
    )
    parser.add_argument("--install-git-hook", action="store_true", help="install the pre-commit hook here")
    parser.add_argument("--uninstall", action="store_true", help="with --install-git-hook: remove it")
    parser.add_argument("--pre-commit", action="store_true", help="run as the pre-commit hook (git calls this)")
    parser.add_argument("--url", help="the team server's executor endpoint: read the task there, not from a tree")
    parser.add_argument("--task-sha256", help="the sha256 of the TASK the hook was printed for")
    parser.add_argument("--token-env", default="HANDOFF_TOKEN", help="with --url: the variable holding the token")
    return parser


def _remote(args: argparse.Namespace) -> RemoteTask | None:
    """The task on the team server, when ``--url`` names one: the hook needs its ref and pinned sha256."""
    if not args.url:
        return None
    if not args.ref or not args.task_sha256:
        _parser().error("--url needs --ref REF and --task-sha256 HEX (as the launch line prints them)")
    from handoff_core.services.evidence.remote_task import RemoteTask  # here: a local hook never loads HTTP

    token = os.environ.get(args.token_env, "")
    if not token:
        raise ConfigError(f"${args.token_env} is empty: export the task's report token there before the agent starts")
    root = Path(args.project_root).absolute() if args.project_root else None
    return RemoteTask(url=args.url, token=token, ref=args.ref, sha=args.task_sha256, project_root=root)


def _roots(args: argparse.Namespace) -> Roots:
    """The roots as given: the printed hook passes both, so a write pays for no discovery of them."""
    if args.project_root and args.state_root and Path(args.state_root).is_absolute():
        return Roots(Path(args.state_root), Path(args.project_root).absolute())
    from server.config import settings_from

    settings = settings_from("executor", args.project_root, args.state_root, role_required=False)
    return Roots(settings.state_root, settings.project_root)


def _lead_anchor(args: argparse.Namespace, roots: Roots) -> TaskAnchor | None:
    """The Lead's anchor, so that each claim rests on its TASK as published; None while there is no secret
    (then no TASK was anchored by it)."""
    from handoff_core.services.capabilities.tokens import lead_anchor
    from server.config import secret_path

    return lead_anchor(secret_path(args.secret_file), roots.project_root, roots.state_root)


def _pre_commit(
    roots: Roots, remote: RemoteTask | None = None, anchor_of: Callable[[], TaskAnchor | None] = lambda: None
) -> int:
    from handoff_core.files import git_process

    tree = Path(os.path.realpath(os.getcwd()))  # git runs a pre-commit hook at the top of the work tree
    keep = {name: os.environ[name] for name in git_process.KEPT if name in os.environ}
    if remote is not None:
        ref, violations = guard.check_commit(tree, roots, keep, remote.rule, remote.ref)
    else:
        ref, violations = guard.check_commit(tree, roots, keep)
    if ref is None and remote is None:  # the main tree: nobody stages another's work (lead_guard)
        return _main_tree_commit(tree, roots, keep, anchor_of())
    if not violations:
        return 0
    print(f"handoff-mcp guard: this commit stages paths outside task {ref}'s scope:", file=sys.stderr)
    for line in violations:
        print(f"  {line}", file=sys.stderr)
    print("Unstage them (git restore --staged PATH), or ask the Lead to widen the task.", file=sys.stderr)
    return 1


def _install_remote(args: argparse.Namespace) -> int:
    """In an executor's clone: the pre-commit hook asking the team server, as the PreToolUse hook does."""
    from handoff_core.files import git, git_hooks
    from server.client_config import server_command

    tree = git.toplevel(Path.cwd())
    if tree is None:
        raise WorkspaceRefused("not inside a git repository: run --install-git-hook in the executor's clone")
    remote = ["--url", args.url, "--ref", args.ref, "--task-sha256", args.task_sha256, "--token-env", args.token_env]
    path = git_hooks.install(tree, [server_command()[0], "guard", "--pre-commit", *remote])
    print(f"handoff-mcp guard: pre-commit hook at {path} (task {args.ref}, read from {args.url})")
    return 0


def _main_tree_commit(tree: Path, roots: Roots, keep: dict[str, str], anchor: TaskAnchor | None) -> int:
    """A commit in a tree no task works for: refused while it stages a path an outstanding executor
    holds, unless that executor commits it, named in ``HANDOFF_REF`` and proven by its report token in
    ``HANDOFF_TOKEN`` (both on its launch line), its TASK as published."""
    from handoff_core.services.evidence import lead_guard

    named, token = os.environ.get(REF_VARIABLE, ""), os.environ.get(TOKEN_VARIABLE, "")
    proven = bool(named) and lead_guard.proven_committer(roots, named, token, anchor)
    held = lead_guard.main_tree_commit(tree, roots, keep, named if proven else "", anchor)
    if not held:
        return 0
    print("handoff-mcp guard: this commit stages paths an outstanding executor holds:", file=sys.stderr)
    for line in held:
        print(f"  {line}", file=sys.stderr)
    if named and not proven:
        print(
            f"{REF_VARIABLE} names {named[:200]}, but ${TOKEN_VARIABLE} does not hold its report token, so the "
            f"commit is not that task's: its executor commits with both set (its launch line sets them).",
            file=sys.stderr,
        )
    print(f"Unstage them (git restore --staged PATH), or {lead_guard.WAY_OUT}.", file=sys.stderr)
    return 1


def _lead_hook(args: argparse.Namespace) -> int:
    """The Lead's PreToolUse hook: a deny for whatever cannot be judged, an error of any kind among it
    (exit 1 is a non-blocking error to both CLIs, which then run the tool); exit 2 (a block) when even
    the answer cannot be written."""
    from handoff_core.services.evidence import lead_guard
    from handoff_core.services.evidence.hook_event import MAX_EVENT_BYTES

    try:
        data = sys.stdin.buffer.read(MAX_EVENT_BYTES + 1)
        roots = _roots(args)
        decision = lead_guard.decide_lead(data, roots, _lead_anchor(args, roots))
    except HandoffError as exc:
        decision = Decision(False, f"handoff guard for the Lead: {exc.message}; denied")
    except Exception as exc:  # any failure is a deny, never the CLI's exit 1
        decision = Decision(False, f"handoff guard for the Lead: could not judge ({type(exc).__name__}); denied")
    try:
        print(lead_guard.hook_answer(decision), end="", flush=True)
    except BaseException as exc:
        print(f"handoff guard for the Lead: could not answer ({type(exc).__name__}); denied", file=sys.stderr)
        return 2
    return 0


def _install(roots: Roots, ref: str | None, uninstall: bool) -> int:
    from handoff_core.files import git, git_hooks

    tree = git.toplevel(Path.cwd())
    if tree is None:
        raise WorkspaceRefused("not inside a git repository: run --install-git-hook in the project or a worktree")
    if uninstall:
        removed = git_hooks.uninstall(tree)
        print(f"handoff-mcp guard: {'removed the pre-commit hook' if removed else 'no hook of ours was installed'}")
        return 0
    from handoff_core.services.tree.queries import Queries
    from server.client_config import server_command

    given = ["--project-root", str(roots.project_root), "--state-root", str(roots.state_root)]
    path = git_hooks.install(tree, [server_command()[0], "guard", "--pre-commit", *given])
    print(f"handoff-mcp guard: pre-commit hook at {path}")
    if ref is not None:
        task, stored = Queries(roots).read_task(parse_ref(ref))
        if os.path.realpath(task.scope.worktree or roots.project_root) != os.path.realpath(tree):
            raise WorkspaceRefused(f"{ref} names the worktree {task.scope.worktree or 'none'}, not {tree}")
        record = git_hooks.record_task(tree, ref, stored.sha256)
        print(f"handoff-mcp guard: {tree} works for {ref} ({record})")
    return 0


def main(argv: Sequence[str]) -> int:
    if hook_mode(list(argv)):  # the agent CLIs' hook: the lean core, never this parser
        return run_hook(list(argv))
    args = _parser().parse_args(list(argv))
    modes = [args.install_git_hook, args.pre_commit, args.lead]
    if (
        sum(modes) != 1
        or (args.uninstall and not args.install_git_hook)
        or (args.pre_commit and args.ref and not args.url)
    ):
        _parser().error(
            "give exactly one of --ref REF, --lead, --install-git-hook [--ref REF] [--uninstall], --pre-commit"
        )
    if args.event != "pre-tool":
        _parser().error(f"--event {args.event} is not judged by this guard")
    try:
        if args.url and args.install_git_hook and not args.uninstall:
            if not args.ref or not args.task_sha256:
                _parser().error("--install-git-hook --url needs --ref REF and --task-sha256 HEX")
            return _install_remote(args)
        if (remote := _remote(args)) is not None:  # no tree here: the roots are never read
            roots = Roots(Path(os.devnull), Path(os.devnull))
            return _pre_commit(roots, remote)
        if args.lead:
            return _lead_hook(args)
        roots = _roots(args)
        if args.pre_commit:
            return _pre_commit(roots, anchor_of=partial(_lead_anchor, args, roots))
        return _install(roots, args.ref, args.uninstall)
    except HandoffError as exc:
        if args.lead:  # a hook that cannot judge denies, in the hook's own form
            from handoff_core.services.evidence import lead_guard

            denied = Decision(False, f"handoff guard for the Lead: {exc.message}; denied")
            print(lead_guard.hook_answer(denied))
            return 0
        print(f"handoff-mcp guard: {exc}", file=sys.stderr)
        return 1 if args.pre_commit else 2

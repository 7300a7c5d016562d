"""``handoff-validate``: a drop-in for the seed's ``validate-handoff.mjs`` (same flags, JSON and exit codes)."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from contextlib import ExitStack

from handoff_core.contract.json_text import dumps
from handoff_core.contract.validate import ValidationResult, check_handoff
from handoff_core.errors import HandoffError
from handoff_core.files.change_dir import locate_change
from handoff_core.files.entries import exists_dir, shown_name, try_open
from handoff_core.files.reader import read_snapshot, round_names
from handoff_core.layout import CHANGES, DEFAULT_STATE_ROOT, REPORT_FILE, SESSIONS, STAGES

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: handoff-validate never loads it
if TYPE_CHECKING:
    from handoff_core.contract.anchor import TaskAnchor

__all__ = ["arguments", "main", "validate_all"]

USAGE = (
    "Usage: handoff-validate --repo <project> [--method-root <methods> --state-root <data-parent>] "
    "--change <id> --session <round> --task <id> --stage dispatch|return\n"
    "Without --state-root the state root is <project>/speculo/.speculo. Read-only; no log discovery or "
    "external transcript access. Exit 0: structure ok; 1: validation failed; 2: bad arguments."
)
ALL_USAGE = (
    "       handoff-validate --all --repo <project> [--state-root <data-parent>] [--change <id>]\n"
    "Every task of the change (or of every active change), each at its stage (return once it has a REPORT.md): "
    "one JSON line per task. Exit 0: all ok; 1: any failed; 2: bad arguments."
)
_FLAGS = {
    "--repo": "repo",
    "--method-root": "method_root",
    "--state-root": "state_root",
    "--change": "change",
    "--session": "session",
    "--task": "task",
    "--stage": "stage",
    "--lead-key": "lead_key",  # an extension: the Lead's secret file, to judge by its anchor (contract.anchor)
}


class UsageError(Exception):
    pass


def arguments(repo: str, change: str, session: str, task: str, stage: str, state_root: str | None = None) -> list[str]:
    """The command line that validates one task (the inverse of ``parse_args``)."""
    values = {"repo": repo, "change": change, "session": session, "task": task, "stage": stage}
    values |= {"state-root": state_root} if state_root else {}
    return [item for key, value in values.items() for item in (f"--{key}", value)]


def parse_args(argv: Sequence[str]) -> dict[str, str]:
    values: dict[str, str] = {}
    items = list(argv)
    for index in range(0, len(items), 2):
        key = _FLAGS.get(items[index])
        value = items[index + 1] if index + 1 < len(items) else ""
        if key is None or key in values or not value or value.startswith("--"):
            raise UsageError("unknown, duplicate or incomplete option")
        values[key] = value
    if not all(values.get(key) for key in ("repo", "change", "session", "task", "stage")):
        raise UsageError("missing required arguments")
    if values["stage"] not in STAGES:
        raise UsageError("invalid stage")
    return values


def state_root(values: dict[str, str]) -> str:
    """The state root: a relative one is the repo's, as in the seed. Joined as text, not with pathlib:
    loading it (and the URL parser it brings) would cost this process ~3 ms for nothing."""
    return os.path.join(os.getcwd(), values["repo"], values.get("state_root") or DEFAULT_STATE_ROOT)


def _anchor(values: dict[str, str], root: str) -> TaskAnchor | None:
    """The Lead's anchor from ``--lead-key`` (the Lead's token secret, with the record beside it of the
    state roots it governs: ``governance``), else None: the files alone."""
    if "lead_key" not in values:
        return None
    from pathlib import Path

    from handoff_core.services.capabilities.tokens import load_secret, task_anchor

    secret_file = Path(values["lead_key"])
    return task_anchor(load_secret(secret_file, Path(values["repo"]), create=False), Path(root), secret_file)


def validate(values: dict[str, str]) -> ValidationResult:
    root = state_root(values)
    change, session, task = values["change"], values["session"], values["task"]
    anchor = _anchor(values, root)
    stage = values["stage"]
    return check_handoff(lambda: read_snapshot(root, change, session, task), stage, change, session, task, anchor)


def parse_all(argv: Sequence[str]) -> dict[str, str]:
    """The flags of ``--all``: the repo, and optionally a state root and one change."""
    values: dict[str, str] = {}
    items = list(argv)
    for index in range(0, len(items), 2):
        key = _FLAGS.get(items[index])
        value = items[index + 1] if index + 1 < len(items) else ""
        if key not in ("repo", "method_root", "state_root", "change") or key in values or not value:
            raise UsageError("--all takes --repo, --state-root and --change only, each once with a value")
        values[key] = value
    if not values.get("repo"):
        raise UsageError("missing required arguments")
    return values


def _active_changes(root: str) -> list[str]:
    try:  # names from the tree: each one is validated as its tasks are (a bad id is a failure, not a skip)
        return sorted(os.listdir(os.path.join(root, *CHANGES)))
    except (FileNotFoundError, NotADirectoryError):
        return []


def _tasks_of(root: str, change: str) -> list[tuple[str, str]]:
    """``(round, task)`` of every task directory of the change, walked by handle."""
    with locate_change(root, change) as (_, change_fd), ExitStack() as stack:
        sessions_fd = try_open(stack, change_fd, (SESSIONS,))
        if sessions_fd is None:
            return []
        found = []
        for session in round_names(sessions_fd, None):
            round_fd = try_open(stack, sessions_fd, (session,))
            tasks = sorted(os.listdir(round_fd)) if round_fd is not None else []
            found += [(session, task) for task in tasks if round_fd is not None and exists_dir(round_fd, task)]
        return found


def _line(change: str, session: str, task: str, result: ValidationResult, stage: str) -> str:
    ids = {"change": change, "session": shown_name(session), "task": shown_name(task), "stage": stage}
    found = {"ok": not result.errors, "errors": list(result.errors), "warnings": list(result.warnings)}
    return dumps(ids | found | {"caveat": result.caveat})


def _judged(root: str, change: str, session: str, task: str) -> tuple[str, ValidationResult]:
    """The task at its stage: ``return`` once it has a REPORT.md, as status judges it; read once."""
    snapshot = read_snapshot(root, change, session, task)
    stage = "return" if snapshot.file(REPORT_FILE).kind != "missing" else "dispatch"
    return stage, check_handoff(lambda: snapshot, stage, change, session, task)


def validate_all(values: dict[str, str]) -> int:
    """One JSON line per task of the change, or of every active change; 1 when any fails."""
    root = state_root(values)
    failed = False
    for change in [values["change"]] if values.get("change") else _active_changes(root):
        try:
            tasks = _tasks_of(root, change)
        except (HandoffError, OSError) as exc:  # a change that cannot be walked fails whole
            print(dumps({"change": shown_name(change), "ok": False, "errors": [str(exc)]}))
            failed = True
            continue
        for session, task in tasks:
            stage, result = _judged(root, change, session, task)
            failed |= bool(result.errors)
            print(_line(change, session, task, result, stage))
    return 1 if failed else 0


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args in (["--help"], ["-h"]):
        print(USAGE)  # the seed's: the extension's usage is asked for with --all --help
        return 0
    if args in (["--all", "--help"], ["--all", "-h"]):
        print(ALL_USAGE.lstrip())
        return 0
    if "--all" in args:
        try:
            return validate_all(parse_all([a for a in args if a != "--all"]))
        except UsageError as exc:
            print(f"{exc}\n{USAGE}\n{ALL_USAGE}", file=sys.stderr)
            return 2
    try:
        values = parse_args(args)
    except UsageError as exc:
        print(f"{exc}\n{USAGE}", file=sys.stderr)
        return 2
    try:
        result = validate(values)
    except HandoffError as exc:  # only --lead-key can raise: a secret that cannot be read
        print(f"{exc.code}: {exc.message}", file=sys.stderr)
        return 2
    shown = {"errors": list(result.errors), "warnings": list(result.warnings), "caveat": result.caveat}
    print(dumps(shown, indent=2))
    return 1 if result.errors else 0


if __name__ == "__main__":
    sys.exit(main())

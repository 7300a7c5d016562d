"""``handoff-validate``: a drop-in for the seed's ``validate-handoff.mjs`` (same flags, JSON and exit codes)."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

from handoff_core.contract.anchor import TaskAnchor
from handoff_core.contract.validate import Verdict, check_handoff
from handoff_core.errors import HandoffError
from handoff_core.files.reader import read_snapshot
from handoff_core.layout import DEFAULT_STATE_ROOT, STAGES

__all__ = ["arguments", "main"]

USAGE = (
    "Usage: handoff-validate --repo <project> [--method-root <methods> --state-root <data-parent>] "
    "--change <id> --session <round> --task <id> --stage dispatch|return\n"
    "Without --state-root the state root is <project>/speculo/.speculo. Read-only; no log discovery or "
    "external transcript access. Exit 0: structure ok; 1: validation failed; 2: bad arguments."
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


def state_root(values: dict[str, str]) -> Path:
    given = values.get("state_root")
    repo = Path(values["repo"]).absolute()
    return repo / given if given else repo / Path(DEFAULT_STATE_ROOT)  # a relative root is the repo's, as in the seed


def _anchor(values: dict[str, str], root: Path) -> TaskAnchor | None:
    """The Lead's anchor from ``--lead-key`` (the Lead's token secret), else None: the files alone."""
    if "lead_key" not in values:
        return None
    from handoff_core.services.capabilities.tokens import load_secret, task_anchor

    secret = load_secret(Path(values["lead_key"]), Path(values["repo"]), create=False)
    return task_anchor(secret, root)


def validate(values: dict[str, str]) -> Verdict:
    root = state_root(values)
    change, session, task = values["change"], values["session"], values["task"]
    anchor = _anchor(values, root)
    stage = values["stage"]
    return check_handoff(lambda: read_snapshot(root, change, session, task), stage, change, session, task, anchor)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args in (["--help"], ["-h"]):
        print(USAGE)
        return 0
    try:
        values = parse_args(args)
    except UsageError as exc:
        print(f"{exc}\n{USAGE}", file=sys.stderr)
        return 2
    try:
        verdict = validate(values)
    except HandoffError as exc:  # only --lead-key can raise: a secret that cannot be read
        print(f"{exc.code}: {exc.message}", file=sys.stderr)
        return 2
    result = {"errors": list(verdict.errors), "warnings": list(verdict.warnings), "caveat": verdict.caveat}
    print(json.dumps(result, indent=2, ensure_ascii=False))
    return 1 if verdict.errors else 0


if __name__ == "__main__":
    sys.exit(main())

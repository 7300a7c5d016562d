"""``handoff-mcp verify --ref REF``: a task's acceptance checks replayed at its reported checkpoint,
printed (or ``--json``); exit 0 only when every check passed and nothing judging them changed."""

from __future__ import annotations

import json

from handoff_core.contract.ids import parse_ref
from handoff_core.contract.values import visible
from handoff_core.services.acceptance.verification import Verification, verify_task
from server.config import Settings
from server.mcp.services import open_store

__all__ = ["verify"]


def _as_json(found: Verification) -> str:
    checks = [
        {
            "run": c.run,
            "cwd": c.cwd,
            "exit_code": c.exit_code,
            "seconds": c.seconds,
            "why": c.why,
            "claimed": c.claimed,
            "tail": c.tail,
        }
        for c in found.checks
    ]
    body = {"verdict": found.verdict, "reason": found.reason, "replayed": found.replayed, "checks": checks}
    return json.dumps(body | {"flags": list(found.flags), "recorded": found.recorded}, ensure_ascii=True)


def _printed(found: Verification) -> None:
    # Output and commands come from the tree: control characters spelled out, never sent to the terminal.
    print(visible(f"verification: {found.verdict}: {found.reason}"))
    if found.replayed:
        print(visible(f"replayed: {found.replayed}"))
    for number, check in enumerate(found.checks, start=1):
        said = check.why or "passed"
        claim = " (the REPORT claims it passed)" if check.claimed and check.why else ""
        print(visible(f"check {number}: {check.run} (in {check.cwd}): {said}{claim}, {check.seconds:.1f} s"))
        for line in check.tail.splitlines()[-10:]:
            print(f"    {visible(line)}")
    for flag in found.flags:
        print(visible(f"flag: {flag}"))


def verify(settings: Settings, ref: str, as_json: bool) -> int:
    found = verify_task(open_store(settings, anchored=True).queries, parse_ref(ref), str(settings.secret_file))
    if as_json:
        print(_as_json(found))
    else:
        _printed(found)
    return 0 if found.verdict == "passed" else 1

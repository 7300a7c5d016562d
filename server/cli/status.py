"""``handoff-mcp status`` and ``doctor``: every task's derived state as a table or JSON, and the leftovers."""

from __future__ import annotations

import json
import sys
import time
from typing import TYPE_CHECKING

from handoff_core.contract.values import visible
from handoff_core.layout import CHANGES
from handoff_core.services.rules.ownership import writer_slots
from handoff_core.services.views.status_view import AuditBudget, TaskFacts, task_facts
from server.config import Settings
from server.mcp.services import open_store

if TYPE_CHECKING:
    from handoff_core.services.tree.status import TaskStatus

__all__ = ["doctor", "status"]

_HOUR, _DAY = 60, 24 * 60  # in minutes
ATTENTION_MARK = "⚠"


def _age(seconds: float) -> str:
    minutes = int(seconds // 60)
    return f"{minutes // _DAY}d" if minutes >= _DAY else f"{minutes // _HOUR}h" if minutes >= _HOUR else f"{minutes}m"


def _status_json(settings: Settings, every: list[TaskStatus], rows: list[TaskFacts]) -> str:
    claims = sum(1 for task in every if task.claims_writer)  # a filter never frees a slot
    slots = writer_slots(claims, settings.writer_cap)
    tasks = [
        {
            "ref": str(f.ref),
            "kind": f.kind,
            "state": f.state,
            "age_seconds": round(f.age_seconds, 1),
            "claim": f.claim,
            "link": f.link,
            "has_locator": f.has_locator,
            "proof": f.proof,
            "audit": f.audit,
            "verification": f.verification,
            "problems": list(f.problems),
            "attention": f.attention,
        }
        for f in rows
    ]
    body = {"state_root": str(settings.state_root), "tasks": tasks, "writer_claims": claims}
    needing = sum(1 for f in rows if f.attention)
    body |= {"needs_attention": needing, "free_writer_slots": slots.free, "writers": slots.describe()}
    return json.dumps(body, ensure_ascii=True)


def status(
    settings: Settings,
    change: str | None,
    session: str | None,
    since: str | None = None,
    as_json: bool = False,
    *,
    archive_check: bool = False,
) -> int:
    if archive_check:
        return archive(settings, change, as_json)
    from handoff_core.services.tree.status_page import changed_since

    queries = open_store(settings).queries
    every = queries.status(change, session)
    tasks = changed_since(every, since) if since else every
    now, audits = time.time(), AuditBudget(queries)  # git only for returned worktree tasks, a bounded few
    rows = [task_facts(task, now, audits.verdict(task), queries) for task in tasks]
    if as_json:
        print(_status_json(settings, every, rows))
        return 0
    _print_table(settings, every, rows, since)
    return 0


def _print_table(settings: Settings, every: list[TaskStatus], rows: list[TaskFacts], since: str | None) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table(
        "ref",
        "kind",
        "state",
        "age",
        "claim",
        "locator",
        "proof",
        "audit",
        "verified",
        "problems",
        title="handoff status",
    )
    for f in rows:
        state = f"{f.state} {ATTENTION_MARK}" if f.attention else f.state
        claim = "; ".join(part for part in (f.claim, f.link) if part)
        cells = [str(f.ref), f.kind or "?", state, _age(f.age_seconds), claim, "yes" if f.has_locator else ""]
        # Names come from the tree: shown as plain text (no rich markup), control characters spelled out.
        shown = [*cells, f.proof, f.audit, f.verification, "; ".join(f.problems)]
        table.add_row(*(Text(visible(cell)) for cell in shown))
    console = Console(width=200)
    if not every:
        console.print(Text(f"no tasks under {visible(str(settings.state_root.joinpath(*CHANGES)))}"))
        return
    console.print(table if rows else Text(f"no task changed since {visible(since or '')}"))
    needing = [f for f in rows if f.attention]
    if needing:  # one line each, below the table: a reason is a sentence, too long for a cell
        console.print(f"needs attention: {len(needing)} task(s)")
        for f in needing:
            console.print(Text(visible(f"{ATTENTION_MARK} {f.ref}: {f.attention}")), soft_wrap=True)
    claims = sum(1 for task in every if task.claims_writer)  # a filter never frees a slot
    console.print(f"writer claims: {claims}; {writer_slots(claims, settings.writer_cap).describe()}")


def archive(settings: Settings, change: str | None, as_json: bool) -> int:
    """``status --change C --archive-check``: 0 when C may be archived, 1 naming the writers to end first."""
    from handoff_core.services.tree.archiving import archive_check

    if not change:
        print("handoff-mcp status: --archive-check needs --change CHANGE", file=sys.stderr)
        return 2
    found = archive_check(open_store(settings).queries, change)
    if as_json:
        must_end = [{"ref": str(t.ref), "state": t.label, "claim": t.claim} for t in found.must_end]
        print(json.dumps({"change": change, "archivable": found.archivable, "must_end": must_end}, ensure_ascii=True))
    else:
        print(visible(found.describe()))
    return 0 if found.archivable else 1


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

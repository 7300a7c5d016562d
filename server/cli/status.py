"""``handoff-mcp status`` and ``doctor``: every task's derived state as a table or JSON, and the leftovers."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING

from handoff_core.contract.values import visible
from handoff_core.layout import CHANGES
from handoff_core.services.rules.ownership import writer_slots
from server.config import Settings
from server.mcp.services import open_store

if TYPE_CHECKING:
    from handoff_core.services.tree.status import TaskStatus

__all__ = ["doctor", "status"]

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

"""The external-web exchange's fixtures: ids, a clock, a sealed review and what came back in."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mcp import Client

from tests.support.archives import zip_of
from tests.support.calls import call, task_args

IDS = {"scope_id": "s1", "dispatch_id": "d1", "attempt_id": "a1"}


def cache_file(tmp_path: Path) -> str:
    (tmp_path / "cache").mkdir(exist_ok=True)
    (tmp_path / "cache" / "claims.json").write_bytes(zip_of(("RETURN.md", b"# Return\n")))  # a ZIP, even
    return str(tmp_path / "cache" / "claims.json")


def inbound(project: Path, ids: dict[str, Any]) -> list[str]:
    """Every path of the dispatch's inbound folder: empty when no return was persisted."""
    root = project / "temp" / "task-delivery" / "s1" / ids["task_id"] / "d1" / "inbound"
    return sorted(path.relative_to(root).as_posix() for path in root.rglob("*")) if root.exists() else []


async def sealed_review(lead: Client, project: Path) -> dict[str, Any]:
    """A review task packaged as dispatch d1; the ids a return to it needs."""
    created = await call(lead, "create_task", **task_args(kind="review", workspace="", writable=[], shared=[]))
    (project / "docs").mkdir(exist_ok=True)
    (project / "docs" / "a.md").write_text("# A\n")
    await call(lead, "package_dispatch", ref=created["ref"], scope_id="s1", dispatch_id="d1", files=["docs"])
    return {**IDS, "task_id": created["ref"].split("/")[2]}


NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)

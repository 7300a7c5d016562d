"""read_handoff, search_history, find_session_log, write_handoff and resolve_coordination in memory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client

from tests.support.calls import call, refused, report_args, task_args
from tests.support.content import text_of
from tests.support.logs import CLAUDE_ID, claude_log
from tests.support.secret_forms import FORMS

pytestmark = pytest.mark.anyio
FOCUS = "Built the parser. Kept YAML strict. Stopped before the CLI. Next: wire the CLI."


async def test_read_handoff_returns_the_focused_handoff_as_untrusted_data(lead: Client, executor: Client) -> None:
    created = await call(lead, "create_task", **task_args())
    await call(executor, "write_report", **report_args(created))
    view = await call(executor, "read_handoff", ref=created["ref"])
    assert view["untrusted"] is True
    assert view["focused"].startswith("Built A1.")
    assert view["task_changed"] is False
    assert view["provenance"][1].startswith("REPORT.md by executor")
    assert await refused(lead, "read_handoff", ref="bad") == "invalid_id"


async def test_history_is_searched_only_in_the_confirmed_log(lead: Client, executor: Client, tmp_path: Path) -> None:
    created = await call(lead, "create_task", **task_args())
    assert await refused(executor, "search_history", ref=created["ref"], query="migration") == "not_found"
    log = claude_log(tmp_path / "home", created["ref"])
    await call(lead, "record_session_locator", ref=created["ref"], path=str(log))
    found = await call(executor, "search_history", ref=created["ref"], query="missing column", max_hits=3)
    assert found["log_path"] == str(log)
    assert found["hits"][0].startswith("3 | u-2 | 2026-11-30T04:51:00.000Z | user:")
    result = await executor.call_tool("search_history", {"ref": created["ref"], "query": "x", "max_hits": 50})
    assert result.is_error


async def test_find_session_log_lists_candidates_with_their_facts(
    lead: Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    created = await call(lead, "create_task", **task_args())
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "home" / ".claude"))
    claude_log(tmp_path / "home", created["ref"])
    found = await call(lead, "find_session_log", tool="claude-code", session_id=CLAUDE_ID, ref=created["ref"])
    assert found["ambiguous"] is False
    assert found["candidates"] == [f"{tmp_path}/home/.claude/projects/-home-me-project/{CLAUDE_ID}.jsonl: ok"]
    none = await call(lead, "find_session_log", tool="claude-code", session_id="99999999-0000-0000-0000-000000000000")
    assert none["candidates"] == []
    assert await refused(lead, "find_session_log", tool="codex", session_id="../x") == "invalid_input"


async def test_write_handoff_publishes_write_once_and_refuses_secrets(executor: Client, project: Path) -> None:
    (project / "docs").mkdir()
    (project / "docs" / "plan.md").write_text("plan\n")
    args = {"scope": "core", "topic": "parser", "focused": FOCUS, "references": ["docs/plan.md"]}
    first = await call(executor, "write_handoff", **args)
    second = await call(executor, "write_handoff", **args)
    assert Path(first["path"]).name.endswith("-core-parser.md")
    assert Path(second["path"]).name.endswith("-core-parser-01.md")
    secret = {**args, "details": "aws_access_key_id = AKIAIOSFODNN7EXAMPLE"}
    result = await executor.call_tool("write_handoff", secret)
    assert result.is_error
    assert "details line 1: AWS Access Key" in text_of(result)
    redacted = await call(executor, "write_handoff", redact=True, **secret)
    assert "AKIAIOSFODNN7EXAMPLE" not in Path(redacted["path"]).read_text()


async def test_resolve_coordination_follows_the_project_file(executor: Client, state_root: Path) -> None:
    assert (await call(executor, "resolve_coordination", work_id="specdev/implement"))["choice"] == {"mode": "lead"}
    (state_root / "coordination").mkdir()
    rules = [{"work_id": "specdev/implement", "stage": "review", "choice": {"mode": "orca"}}]
    (state_root / "coordination" / "project.json").write_text(
        json.dumps({"schema_version": 1, "defaults": {"mode": "lead"}, "rules": rules})
    )
    found = await call(executor, "resolve_coordination", work_id="specdev/implement", stage="review")
    assert (found["choice"], found["source"]) == ({"mode": "orca"}, "Work+stage rule #0")
    (state_root / "coordination" / "project.json").write_text("{broken")
    blocked = await call(executor, "resolve_coordination", work_id="specdev/implement")
    assert blocked["choice"] == {}
    assert blocked["reasons"]


@pytest.mark.parametrize("name", sorted(FORMS))
async def test_write_handoff_refuses_or_redacts_each_common_secret_form(
    executor: Client, project: Path, name: str
) -> None:
    text, secret = FORMS[name]
    args = {"scope": "core", "topic": "parser", "focused": FOCUS, "details": f"Context line.\n{text}"}
    result = await executor.call_tool("write_handoff", args)
    assert result.is_error, name
    assert "details line " in text_of(result)
    assert secret not in text_of(result)
    published = Path((await call(executor, "write_handoff", redact=True, **args))["path"]).read_text()
    assert secret not in published
    assert "[REDACTED]" in published

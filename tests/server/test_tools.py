"""Every tool through the SDK's in-memory client, in both protocol modes."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from bench.trees import generate
from handoff_core.files.reader import read_snapshot
from handoff_core.services.capabilities.tokens import executor_session_id
from tests.support.archives import zip_of
from tests.support.calls import call, refused, report_args, task_args
from tests.support.changes import CHANGE, make_change
from tests.support.content import resource_text, text_of

pytestmark = pytest.mark.anyio


async def test_create_task_returns_ref_paths_hash_token_and_dispatch_message(lead: Client, state_root: Path) -> None:
    created = await call(lead, "create_task", **task_args())
    change, session, task = created["ref"].split("/")
    assert (change, task) == (CHANGE, "001-implement-a1")
    assert Path(created["task_path"]).is_file()
    assert created["task_path_in_project"].startswith("speculo/.speculo/specdev/changes/")
    message = created["dispatch_message"]
    assert created["report_token"] in message
    assert created["task_sha256"] in message
    assert f"{session}/{task} · <Status> · {created['report_path_in_project']}" in message
    assert '"--role", "executor"' in created["executor_config"]["codex_config_toml"]
    assert "executor" in created["executor_config"]["claude_code_mcp_json"]
    assert created["executor_config"]["claude_code_cli"].startswith(
        f"env HANDOFF_ROLE=executor HANDOFF_REF={created['ref']} HANDOFF_TOKEN={created['report_token']} "
        f"{sys.executable} -I -S "
    )  # the executor role, the task it works for and its proof (its own commits in the main tree pass), sandboxed
    assert f" --task-sha256 {created['task_sha256']} -- claude " in created["executor_config"]["claude_code_cli"]
    assert read_snapshot(state_root, change, session, task).file("TASK.md").kind == "file"


async def test_create_task_records_authorised_actions_and_stop_conditions_and_the_launch_hooks(
    lead: Client, state_root: Path
) -> None:
    stops = ["the tests fail twice", "a schema change is needed"]
    args = task_args(authorised_actions=["commit", "push"], stop_conditions=stops, sandbox="off")
    created = await call(lead, "create_task", **args)
    text = Path(created["task_path"]).read_text()
    assert "- Authorised actions: `commit`, `push`" in text
    assert "  - a schema change is needed" in text
    config = created["executor_config"]
    settings = json.loads(config["claude_code_settings"])
    assert sorted(settings["hooks"]) == ["PostToolUse", "PreToolUse", "Stop"]
    pre = settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    assert f"--ref {created['ref']} --task-sha256 {created['task_sha256']} --event pre-tool" in pre
    assert f"--session-id {executor_session_id(created['report_token'])}" in config["claude_code_cli"]
    assert await refused(lead, "create_task", **task_args(topic="x", authorised_actions=["deploy"])) in (
        "invalid_arguments",
        "invalid_content",
    )


async def test_create_task_outside_git_answers_with_a_warning_that_the_task_has_no_base(lead: Client) -> None:
    created = await call(lead, "create_task", **task_args())  # the project is in no git repository
    (warning,) = created["warnings"]
    assert warning.startswith("the task has no git base:")
    assert "the audit cannot judge" in warning
    assert "`git init` and commit" in warning


async def test_a_full_cycle_passes_return_validation(lead: Client) -> None:
    created = await call(lead, "create_task", **task_args())
    written = await call(lead, "write_report", **report_args(created))
    assert written["created"]
    assert written["reply_line"].endswith("· Built A1.")
    assert written["warnings"] == []
    again = await call(lead, "write_report", **report_args(created))
    assert not again["created"]
    verdict = await call(lead, "validate_handoff", ref=created["ref"], stage="return")
    assert verdict["ok"], verdict["errors"]
    status = await call(lead, "handoff_status", change=CHANGE)
    assert [t["state"] for t in status["tasks"]] == ["returned:completed"]


async def test_read_task_returns_the_structured_task_and_its_hash(lead: Client) -> None:
    created = await call(lead, "create_task", **task_args())
    task = await call(lead, "read_task", ref=created["ref"])
    assert task["task_sha256"] == created["task_sha256"]
    assert task["text"] == Path(created["task_path"]).read_text()
    assert "`pyproject.toml` (owner: lead)" in task["text"]


async def test_status_shows_writer_claims_and_free_slots(lead: Client) -> None:
    created = await call(lead, "create_task", **task_args())
    status = await call(lead, "handoff_status")
    assert [t["claim"] for t in status["tasks"] if t["ref"] == created["ref"]] == ["current: src/a1/**"]
    assert status["free_writer_slots"] == 0  # a plan without writer_limit has one writer, and it is out
    assert status["tasks"][0]["state"] == "dispatched"


async def test_the_free_writer_slots_shown_are_what_create_task_admits_now(lead: Client) -> None:
    await call(lead, "create_task", **task_args())  # current, no writer_limit
    status = await call(lead, "handoff_status")
    assert status["free_writer_slots"] == 0
    assert "2 with writer_limit=3" in status["writers"]
    assert await refused(lead, "create_task", **task_args(topic="b", workspace="required", writable=["b/**"])) == (
        "ownership_conflict"
    )
    parallel = {"workspace": "required", "writer_limit": 3, "shared": []}
    for topic in ("c", "d"):
        await call(lead, "create_task", **task_args(topic=topic, writable=[f"{topic}/**"], **parallel))
    status = await call(lead, "handoff_status")
    assert (status["free_writer_slots"], status["writers"]) == (0, "free writer slots: 0")
    assert await refused(lead, "create_task", **task_args(topic="e", writable=["e/**"], **parallel)) == (
        "ownership_conflict"
    )


async def test_a_parallel_writer_refusal_names_the_way_out_over_mcp(lead: Client) -> None:
    await call(lead, "create_task", **task_args())
    result = await lead.call_tool("create_task", task_args(topic="docs", writable=["docs/**"], shared=[]))
    text = result.content[0].text  # type: ignore[union-attr]
    assert result.is_error
    assert 'workspace="required"' in text
    assert "writer_limit" in text


async def test_status_since_filters_the_tasks_but_never_the_free_writer_slots(lead: Client) -> None:
    created = await call(lead, "create_task", **task_args())
    os.utime(created["task_path"], (1_700_000_000, 1_700_000_000))  # dispatched in November 2023
    older = await call(lead, "handoff_status", since="2023-11-14T00:00:00Z")
    newer = await call(lead, "handoff_status", since="2026-01-01T00:00:00+01:00")
    assert [t["ref"] for t in older["tasks"]] == [created["ref"]]
    assert (newer["tasks"], newer["counts"]) == ([], {})
    assert older["writers"] == newer["writers"]
    assert older["writers"].startswith("free writer slots: 0 without writer_limit; 2 with writer_limit=3")
    assert await refused(lead, "handoff_status", since="last week") == "invalid_input"


async def test_status_at_two_thousand_tasks_fits_in_25_kb_and_pages_through_every_task_once(
    lead: Client, state_root: Path
) -> None:
    generate(state_root, 2000)  # every third returned, the rest dispatched (outstanding)
    status = await call(lead, "handoff_status")
    assert status["counts"] == {"dispatched": 1333, "returned:completed": 667}
    seen: list[str] = []
    view = "all"
    for _ in range(2000):  # bounded: a page holds at least one task
        result = await lead.call_tool("handoff_status", {"view": view})
        assert len(text_of(result).encode()) <= 25_000
        page = result.structured_content
        assert page is not None
        seen += [t["ref"] for t in page["tasks"]]
        if not (view := page["next_cursor"]):
            break
    assert len(seen) == len(set(seen)) == 2000
    assert await refused(lead, "handoff_status", view="all|forged") == "invalid_input"


async def test_locator_capture_and_release_tools_publish_their_files(lead: Client) -> None:
    first = await call(lead, "create_task", **task_args())
    session = first["ref"].split("/")[1]
    second = await call(
        lead,
        "create_task",
        **task_args(topic="review-a1", kind="review", workspace="", writable=[], session=session),
    )
    located = await call(
        lead, "record_session_locator", ref=first["ref"], path="/home/me/.claude/projects/p/abc.jsonl", verify=False
    )
    assert located["created"]
    captured = await call(
        lead, "capture_report", ref=second["ref"], status="completed", original_locator="call-9", text="LGTM"
    )
    assert Path(captured["path"]).name == "REPORT.md"
    third = await call(
        lead,
        "create_task",
        **task_args(topic="fix-a1", session=session, workspace="required", writable=["src/b/**"], writer_limit=2),
    )
    released = await call(lead, "release_writer", ref=third["ref"], kind="none", evidence="executor never started")
    assert Path(released["path"]).name == "RELEASE.md"


@pytest.mark.parametrize(
    ("overrides", "code"),
    [
        ({"change": "2026-11-29-missing"}, "change_not_found"),
        ({"change": "not-a-change"}, "invalid_id"),
        ({"topic": "Bad Topic"}, "invalid_id"),
        ({"goal": "## Goal\nsmuggled"}, "invalid_content"),
        ({"kind": "review", "workspace": ""}, "ownership_conflict"),
        ({"writable": ["../escape/**"]}, "invalid_content"),
        ({"shared": ["no-owner"]}, "invalid_content"),
        ({"session": "20261130T044500Z-1"}, "invalid_id"),
        ({"session": "20261130T044500Z"}, "invalid_content"),
    ],
)
async def test_create_task_refuses_bad_input_with_a_stable_code(
    lead: Client, overrides: dict[str, Any], code: str
) -> None:
    assert await refused(lead, "create_task", **task_args(**overrides)) == code


async def test_create_task_refuses_a_change_that_is_not_active(lead: Client, state_root: Path) -> None:
    make_change(state_root, "2026-11-29-done", outcome="completed")
    assert await refused(lead, "create_task", **task_args(change="2026-11-29-done")) == "change_not_active"


async def test_write_report_refusals_carry_their_codes(lead: Client) -> None:
    created = await call(lead, "create_task", **task_args())
    assert await refused(lead, "write_report", **report_args(created, token="")) == "token_refused"
    assert await refused(lead, "write_report", **report_args(created, token="x" * 24)) == "token_refused"
    assert await refused(lead, "write_report", **report_args(created, task_sha256="0" * 64)) == "task_changed"
    ghost = created["ref"].rsplit("/", 1)[0] + "/009-ghost"
    assert await refused(lead, "write_report", **report_args(created, ref=ghost)) == "token_refused"
    assert await refused(lead, "write_report", **report_args(created, focused="")) == "invalid_content"
    await call(lead, "write_report", **report_args(created))
    assert await refused(lead, "write_report", **report_args(created, status="failed")) == "write_conflict"


async def test_reader_and_lead_tool_refusals_carry_their_codes(lead: Client) -> None:
    created = await call(lead, "create_task", **task_args())
    assert await refused(lead, "read_task", ref="nope") == "invalid_id"
    assert await refused(lead, "read_task", ref=created["ref"].rsplit("/", 1)[0] + "/009-ghost") == "task_not_found"
    assert await refused(lead, "validate_handoff", ref="a/b", stage="return") == "invalid_id"
    assert await refused(lead, "handoff_status", change="bad") == "invalid_id"
    assert await refused(lead, "record_session_locator", ref=created["ref"], path="logs/x.jsonl") == "invalid_locator"
    await call(lead, "record_session_locator", ref=created["ref"], path="/x/a.jsonl", verify=False)
    assert (
        await refused(lead, "record_session_locator", ref=created["ref"], path="/x/b.jsonl", verify=False)
        == "locator_conflict"
    )
    assert (
        await refused(lead, "capture_report", ref=created["ref"], status="completed", original_locator="m", text="  ")
        == "invalid_content"
    )
    assert await refused(lead, "release_writer", ref=created["ref"], kind="none", evidence=" ") == "invalid_content"
    await call(lead, "write_report", **report_args(created))
    assert await refused(lead, "release_writer", ref=created["ref"], kind="none", evidence="x") == "already_reported"


async def test_a_failed_validation_is_a_result_not_a_tool_error(lead: Client) -> None:
    created = await call(lead, "create_task", **task_args())
    verdict = await call(lead, "validate_handoff", ref=created["ref"], stage="return")
    assert not verdict["ok"]
    assert "REPORT.md not found" in verdict["errors"]


async def test_the_resource_template_serves_handoff_files(lead: Client) -> None:
    created = await call(lead, "create_task", **task_args())
    templates = await lead.list_resource_templates()
    assert [t.uri_template for t in templates.resource_templates] == ["handoff://{change}/{session}/{task}/{name}"]
    result = await lead.read_resource(f"handoff://{created['ref']}/TASK.md")
    assert Path(created["task_path"]).read_text() == resource_text(result)


async def test_the_lead_packages_a_dispatch_and_receives_its_return(
    lead: Client, project: Path, tmp_path: Path
) -> None:
    created = await call(lead, "create_task", **task_args(kind="review", workspace="", writable=[], shared=[]))
    (project / "docs").mkdir()
    (project / "docs" / "a.md").write_text("# A\n")
    task = created["ref"].split("/")[2]
    sealed = await call(lead, "package_dispatch", ref=created["ref"], scope_id="s1", dispatch_id="d1", files=["docs"])
    assert sealed["included"] == 1
    assert sealed["locator"].endswith("d1.outbound.zip")
    download = tmp_path / "answer.zip"
    download.write_bytes(zip_of(("RETURN.md", b"# Return\n")))
    got = await call(
        lead, "receive_return", scope_id="s1", task_id=task, dispatch_id="d1", attempt_id="a1", raw_file=str(download)
    )
    assert (got["extracted"], got["kept"]) == (0, ["RETURN.md"])
    status = await call(lead, "handoff_status")
    assert status["external"] == [f"temp/task-delivery/s1/{task}/d1: sealed; return attempts: a1"]
    both = {"scope_id": "s1", "task_id": task, "dispatch_id": "d1", "attempt_id": "a2"}
    assert await refused(lead, "receive_return", **both) == "invalid_content"


async def test_a_lead_claim_blocks_a_conflicting_dispatch_until_released(lead: Client) -> None:
    claimed = await call(
        lead,
        "claim_writer",
        change=CHANGE,
        topic="lead-edits",
        who="lead",
        workspace="current",
        writable=["src/a1/**"],
        why="the Lead fixes the parser itself",
    )
    assert await refused(lead, "create_task", **task_args()) == "ownership_conflict"
    await call(lead, "release_writer", ref=claimed["ref"], kind="stopped", evidence="the Lead finished its edit")
    assert (await call(lead, "create_task", **task_args()))["created"]


async def test_a_change_with_two_homes_refuses_a_second_writer_and_status_shows_the_hold(
    lead: Client, state_root: Path
) -> None:
    await call(lead, "create_task", **task_args())
    make_change(state_root, "2026-11-30-other")
    (state_root / "specdev" / "archive" / "2026-11" / CHANGE).mkdir(parents=True)
    other = task_args(change="2026-11-30-other", topic="second", workspace="required", writable=["docs/b/**"])
    assert await refused(lead, "create_task", **other) == "ownership_conflict"
    status = await call(lead, "handoff_status")
    held = [t for t in status["tasks"] if t["ref"] == f"{CHANGE}/*/*"]
    assert len(held) == 1
    assert held[0]["state"] == "invalid"
    assert held[0]["claim"].startswith(f"whole workspace (change {CHANGE} cannot be read")
    assert "more than one place" in held[0]["problems"][0]


async def test_a_dispatch_beside_a_character_class_claim_gets_a_coded_answer(lead: Client) -> None:
    claimed = {"workspace": "required", "writable": ["src/[a-z0-9]*.py"], "shared": [], "writer_limit": 3}
    await call(lead, "create_task", **task_args(**claimed))
    for other in ("src/main.py", "**", "src/[a-z0-9]*.py"):
        second = task_args(topic="second", workspace="required", writable=[other], shared=[], writer_limit=3)
        assert await refused(lead, "create_task", **second) == "ownership_conflict"


async def test_an_indented_fence_in_a_goal_or_a_reports_problems_is_refused(lead: Client) -> None:
    hidden = "Do it.\n\n  ```\n## Return\n  ```\n\nThen stop."
    assert await refused(lead, "create_task", **task_args(goal=hidden)) == "invalid_content"
    created = await call(lead, "create_task", **task_args())
    assert await refused(lead, "write_report", **report_args(created, problems=hidden)) == "invalid_content"
    assert (await call(lead, "write_report", **report_args(created)))["created"]

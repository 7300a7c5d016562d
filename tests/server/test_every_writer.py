"""Every writer counted, through the MCP tools (SDK client, both modes) and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client

from handoff_core.services.writing.store import Store
from server.cli import main
from tests.support.calls import call, refused, report_args, task_args
from tests.support.changes import CHANGE, make_change
from tests.support.content import text_of
from tests.support.gitrepo import add_worktree, commit_all, make_repo, write
from tests.support.writers import observation

pytestmark = pytest.mark.anyio


async def test_a_test_observation_is_refused_a_port_an_implementation_holds(lead: Client) -> None:
    writer = await call(lead, "create_task", **task_args(resources=["port:5432"]))
    result = await lead.call_tool("create_task", observation(resources=["port:5432"]))
    assert result.is_error
    assert "ownership_conflict" in text_of(result)
    assert writer["ref"] in text_of(result)
    assert "release_writer" in text_of(result)


async def test_read_only_artifacts_beside_a_writer_of_those_paths_are_refused(lead: Client) -> None:
    await call(lead, "create_task", **task_args(writable=["src/a/**"]))
    assert await refused(lead, "create_task", **observation(artifacts=["src/a/**"])) == "ownership_conflict"
    await call(lead, "create_task", **observation(artifacts=["out/**"]))


async def test_five_dispatches_share_one_round_and_new_round_opens_another(lead: Client) -> None:
    refs = [
        (await call(lead, "create_task", **observation(topic=f"review-{n}", kind="review")))["ref"] for n in range(5)
    ]
    assert len({ref.split("/")[1] for ref in refs}) == 1
    fresh = await call(lead, "create_task", **observation(topic="other", kind="review", new_round=True))
    assert fresh["ref"].split("/")[1] != refs[0].split("/")[1]


async def test_a_review_waits_for_its_report_then_pins_the_checkpoint(
    lead: Client, executor: Client, project: Path
) -> None:
    make_repo(project)
    tree = add_worktree(project, "task-a")
    created = await call(
        lead, "create_task", **task_args(workspace="required", worktree=str(tree), branch="task-a", shared=[])
    )
    review = observation(topic="review-a1", kind="review", review_of=created["ref"])
    assert await refused(lead, "create_task", **review) == "state_refused"
    write(tree, "src/a1/core.py", "the candidate\n")
    checkpoint = commit_all(tree)
    await call(executor, "write_report", **report_args(created, source_checkpoint=checkpoint))
    reviewed = await call(lead, "create_task", **review)
    assert reviewed["ref"].split("/")[1] == created["ref"].split("/")[1]
    task = await call(lead, "read_task", ref=reviewed["ref"])
    assert f'base: "{checkpoint}"' in task["text"]
    assert f'review_of: "{created["ref"]}"' in task["text"]
    status = await call(lead, "handoff_status", view="all")
    (row,) = [t for t in status["tasks"] if t["ref"] == reviewed["ref"]]
    assert f"review of {created['ref']} at {checkpoint[:12]}" in row["claim"]


async def test_status_says_which_writers_must_end_before_the_change_is_archived(lead: Client) -> None:
    writer = await call(lead, "create_task", **task_args())
    status = await call(lead, "handoff_status", change=CHANGE, view="outstanding")
    assert [t["ref"] for t in status["tasks"]] == [writer["ref"]]
    assert "not archivable yet" in status["writers"]
    assert writer["ref"] in status["writers"]
    await call(lead, "release_writer", ref=writer["ref"], kind="none", evidence="never started")
    status = await call(lead, "handoff_status", change=CHANGE)
    assert "may be archived" in status["writers"]


async def test_a_mistyped_change_is_refused_naming_the_closest(lead: Client, state_root: Path) -> None:
    make_change(state_root, "2026-11-30-parser")
    result = await lead.call_tool("create_task", task_args(change="2026-11-30-parsre"))
    assert result.is_error
    text = text_of(result)
    assert "change_not_found" in text
    assert "2026-11-30-parser" in text
    assert "create " not in text


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    return code, capsys.readouterr().out


def test_the_cli_archive_check_exits_one_naming_the_writers(
    store: Store, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bench.requests import implementation

    ref = store.create_task(implementation()).ref
    code, out = cli(capsys, "status", "--project-root", str(project), "--change", CHANGE, "--archive-check")
    assert (code, str(ref) in out) == (1, True)
    code, out = cli(capsys, "status", "--project-root", str(project), "--change", CHANGE, "--archive-check", "--json")
    assert json.loads(out)["must_end"][0]["ref"] == str(ref)
    store.release_writer(ref, "none", "never started")
    code, out = cli(capsys, "status", "--project-root", str(project), "--change", CHANGE, "--archive-check", "--json")
    assert (code, json.loads(out)["archivable"]) == (0, True)


def test_the_cli_status_labels_original_contract_tasks_and_shows_links(
    store: Store, project: Path, state_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.support.writers import original_task

    original_task(state_root)
    code, out = cli(capsys, "status", "--project-root", str(project), "--json")
    (row,) = json.loads(out)["tasks"]
    assert (code, row["state"], row["claim"]) == (0, "original-contract:dispatched", "")
    assert json.loads(out)["writer_claims"] == 0


async def test_the_leads_claim_admits_its_own_edits_and_an_executors_denies_them(
    lead: Client, project: Path, store: Store
) -> None:
    from handoff_core.services.evidence.lead_guard import decide_lead
    from tests.support.lead_events import event

    await call(
        lead,
        "claim_writer",
        change=CHANGE,
        topic="lead-docs",
        who="lead",
        workspace="required",
        writable=["docs/**"],
        why="the Lead edits the guide",
        writer_limit=2,
    )
    executor_task = await call(lead, "create_task", **task_args(writer_limit=2))
    assert decide_lead(event(project / "docs/guide.md", project), store.roots).allow
    denied = decide_lead(event(project / "src/a1/core.py", project), store.roots)
    assert (denied.allow, executor_task["ref"] in denied.reason) == (False, True)

"""Evidence through the tools: a REPORT proven by its signature, a worktree task audited."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client

from handoff_core.contract.proof import PROOF_INVALID
from tests.support.calls import call, refused, report_args, task_args
from tests.support.changes import CHANGE, make_change
from tests.support.gitrepo import add_worktree, commit_all, git, make_repo, write

pytestmark = pytest.mark.anyio


async def test_a_report_the_executors_server_publishes_is_proven_to_the_lead(lead: Client, executor: Client) -> None:
    created = await call(lead, "create_task", **task_args())
    assert "- Report signing key: `ed25519:" in Path(created["task_path"]).read_text()
    await call(executor, "write_report", **report_args(created))
    assert (await call(lead, "read_handoff", ref=created["ref"]))["proof"] == "valid"
    assert (await call(lead, "validate_handoff", ref=created["ref"], stage="return"))["proof"] == "valid"
    status = await call(lead, "handoff_status", change=CHANGE, view="all")
    assert [t["proof"] for t in status["tasks"]] == ["valid"]


async def test_a_captured_reply_is_proven_too(lead: Client) -> None:
    created = await call(lead, "create_task", **task_args())
    await call(lead, "capture_report", ref=created["ref"], status="completed", original_locator="call-1", text="done")
    assert (await call(lead, "read_handoff", ref=created["ref"]))["proof"] == "valid"


async def test_an_edited_report_is_flagged_invalid_in_status_and_still_ends_the_claim(lead: Client) -> None:
    created = await call(lead, "create_task", **task_args())
    written = await call(lead, "write_report", **report_args(created))
    path = Path(written["path"])
    data = path.read_bytes().replace(b"pytest: exit 0", b"pytest: exit 0, and more")
    path.chmod(0o644)
    path.unlink()
    path.write_bytes(data)
    verdict = await call(lead, "validate_handoff", ref=created["ref"], stage="return")
    assert verdict["proof"] == "invalid"
    assert PROOF_INVALID in verdict["errors"]
    status = await call(lead, "handoff_status", change=CHANGE, view="all")
    assert [(t["state"], t["proof"], t["claim"]) for t in status["tasks"]] == [("returned:completed", "invalid", "")]
    assert (await call(lead, "read_handoff", ref=created["ref"]))["proof"] == "invalid"


async def test_a_worktree_task_is_audited_through_the_tools(lead: Client, executor: Client, project: Path) -> None:
    make_repo(project)
    tree = add_worktree(project, "task-a")
    args = task_args(workspace="required", worktree=str(tree), branch="task-a", shared=[])
    created = await call(lead, "create_task", **args)
    assert f"In {tree.resolve()}, commit your work and pass source_checkpoint" in created["dispatch_message"]
    base = git(tree, "rev-parse", "HEAD").stdout.strip()
    write(tree, "src/a1/new.py")
    write(tree, "src/b/other.py", "not this task's\n")
    checkpoint = commit_all(tree)
    await call(executor, "write_report", **report_args(created, source_checkpoint=checkpoint))
    audited = await call(lead, "audit_task", ref=created["ref"])
    assert (audited["verdict"], audited["base"], audited["checkpoint"]) == ("failed", base, checkpoint)
    assert [v["path"] for v in audited["violations"]] == ["src/b/other.py"]
    assert audited["changed"] == ["A src/a1/new.py", "M src/b/other.py"]
    status = await call(lead, "handoff_status", change=CHANGE, view="all")
    assert [t["audit"] for t in status["tasks"]] == ["failed"]
    assert (await call(lead, "read_handoff", ref=created["ref"]))["audit"] == "failed"


async def test_a_path_that_is_not_a_linked_worktree_is_refused_at_dispatch(lead: Client, project: Path) -> None:
    make_repo(project)
    args = task_args(workspace="required", worktree=str(project), branch="main", shared=[])
    assert await refused(lead, "create_task", **args) == "workspace_refused"


async def test_a_checkpoint_that_is_not_a_full_commit_id_is_refused(lead: Client) -> None:
    created = await call(lead, "create_task", **task_args())
    assert await refused(lead, "write_report", **report_args(created, source_checkpoint="HEAD")) == "invalid_content"


async def test_a_reviews_artifacts_are_set_aside_in_the_reviewed_audit_only_while_its_task_is_as_published(
    lead: Client, executor: Client, project: Path
) -> None:
    make_repo(project)
    tree = add_worktree(project, "task-a")
    created = await call(
        lead, "create_task", **task_args(workspace="required", worktree=str(tree), branch="task-a", shared=[])
    )
    write(tree, "src/a1/new.py")
    await call(executor, "write_report", **report_args(created, source_checkpoint=commit_all(tree)))
    review = task_args(topic="review-a1", kind="review", workspace="", writable=[], shared=[], artifacts=["reviews/**"])
    reviewing = await call(lead, "create_task", **review, review_of=created["ref"])
    write(tree, "reviews/findings.md")
    audited = await call(lead, "audit_task", ref=created["ref"])
    assert (audited["verdict"], audited["not_judged"]) == (
        "passed",
        [f"reviews/findings.md: an artifact of {reviewing['ref']}, which its audit judges"],
    )
    path = Path(reviewing["task_path"])  # the review's TASK rewritten to claim everything
    text = path.read_text().replace('"reviews/**"', '"**"')
    assert text != path.read_text()
    path.chmod(0o644)
    path.write_text(text)
    write(tree, "src/b/other.py", "not the candidate's\n")
    audited = await call(lead, "audit_task", ref=created["ref"])
    assert audited["verdict"] == "failed"
    assert sorted(v["path"] for v in audited["violations"]) == ["reviews/findings.md", "src/b/other.py"]
    assert audited["not_judged"] == []


async def test_the_readme_walkthrough_s_current_task_is_audited_since_its_dispatch(
    lead: Client, executor: Client, project: Path, state_root: Path
) -> None:
    from tests.support.readme import FENCE, filled, region

    blocks = {info.split()[1]: body for info, body in FENCE.findall(region("walkthrough")) if info.startswith("json")}
    git(project, "init", "-q")  # "any git repository": a new one, as the README's own test makes
    request = json.loads(blocks["create_task"])
    make_change(state_root, request["change"])
    write(project, ".mcp.json", '{"mcpServers": {}}\n')  # step 2 prints it before the dispatch
    created = await call(lead, "create_task", **request)
    write(project, "notes/hello.txt", "hello\n")  # step 4, the executor's work
    values = {"REF": created["ref"], "TOKEN": created["report_token"], "TASK_SHA256": created["task_sha256"]}
    await call(executor, "write_report", **json.loads(filled(blocks["write_report"], values)))
    audited = await call(lead, "audit_task", ref=created["ref"])
    assert (audited["verdict"], audited["dirty"], audited["violations"]) == ("unknown", ["? notes/hello.txt"], [])
    assert "(1) lies in the TASK's scope (writable: notes/hello.txt)" in audited["reason"]
    assert [line.split(":")[0] for line in audited["not_judged"]] == [".mcp.json"]
    status = await call(lead, "handoff_status", view="all")
    assert [t["audit"] for t in status["tasks"] if t["ref"] == created["ref"]] == ["unknown"]
    assert (await call(lead, "read_handoff", ref=created["ref"]))["audit"] == "unknown"

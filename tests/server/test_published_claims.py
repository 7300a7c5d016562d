"""Claims rest on the TASK as published: one its executor rewrote holds the whole workspace (fail closed)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from mcp import Client

from tests.support.calls import call, refused, task_args
from tests.support.gitrepo import ENV, make_repo
from tests.support.guard_calls import commit, event, guard
from tests.support.writers import ORIGINAL_TASK, observation

pytestmark = pytest.mark.anyio


def into_the_original_contract(text: str) -> str:
    return ORIGINAL_TASK


def narrowed(text: str) -> str:
    return text.replace("src/a1/**", "src/a1/core.py")


def without_its_resource(text: str) -> str:
    text = text.replace("- Resources: `port:5432`", "- Resources: none")
    return text.replace('resources: ["port:5432"]', "resources: []")


REWRITES: dict[str, Callable[[str], str]] = {
    "into the original contract": into_the_original_contract,
    "its globs narrowed": narrowed,
    "its resource dropped": without_its_resource,
}


def rewrite(task_path: Path, how: Callable[[str], str]) -> None:
    """What an executor's shell does to its own outstanding TASK."""
    text = task_path.read_text()
    changed = how(text)
    assert changed != text
    task_path.chmod(0o644)
    task_path.write_text(changed)


@pytest.mark.parametrize("how", REWRITES.values(), ids=REWRITES.keys())
async def test_an_outstanding_task_that_rewrites_its_task_frees_nothing_for_the_next_dispatch(
    lead: Client, how: Callable[[str], str]
) -> None:
    created = await call(lead, "create_task", **task_args(resources=["port:5432"]))  # current, src/a1/**
    rewrite(Path(created["task_path"]), how)
    beside = observation(topic="observe-a", artifacts=["src/a1/other/**"])
    assert await refused(lead, "create_task", **beside) == "ownership_conflict"
    port = observation(topic="observe-port", resources=["port:5432"])
    assert await refused(lead, "create_task", **port) == "ownership_conflict"
    status = await call(lead, "handoff_status", view="all")
    (row,) = [t for t in status["tasks"] if t["ref"] == created["ref"]]
    assert row["claim"].startswith("whole workspace (TASK changed since dispatch")


@pytest.mark.slow
@pytest.mark.parametrize("how", REWRITES.values(), ids=REWRITES.keys())
async def test_the_leads_guard_holds_a_rewritten_tasks_paths(
    lead: Client, project: Path, secret_file: Path, how: Callable[[str], str]
) -> None:
    make_repo(project)
    created = await call(lead, "create_task", **task_args(resources=["port:5432"]))
    rewrite(Path(created["task_path"]), how)
    env = {**ENV, "HANDOFF_SECRET_FILE": str(secret_file)}  # the Lead's secret, as its session finds it
    for path in ("src/a1/other.py", "src/b/other.py"):
        answer = guard(project, "--lead", stdin=event(project / path, project), env=env)
        assert answer.returncode == 0, answer.stderr
        reason = json.loads(answer.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
        assert re.search(rf"{re.escape(created['ref'])} \(TASK changed since dispatch", reason), reason


@pytest.mark.slow
async def test_the_main_tree_hook_refuses_a_path_a_narrowed_task_held_as_published(
    lead: Client, project: Path, secret_file: Path
) -> None:
    make_repo(project)
    created = await call(lead, "create_task", **task_args())  # current, src/a1/**
    rewrite(Path(created["task_path"]), narrowed)  # now src/a1/core.py alone
    assert guard(project, "--install-git-hook", cwd=project).returncode == 0
    env = {**ENV, "HANDOFF_SECRET_FILE": str(secret_file)}
    refused_commit = commit(project, "src/a1/other.py", env=env)
    assert refused_commit.returncode != 0
    assert f"{created['ref']} (TASK changed since dispatch" in refused_commit.stderr


@pytest.mark.slow
async def test_the_leads_guard_denies_when_it_cannot_look_for_the_secret(lead: Client, project: Path) -> None:
    make_repo(project)
    await call(lead, "create_task", **task_args())
    env = {**ENV, "HANDOFF_SECRET_FILE": "/tmp/" + "x" * 300}  # a name too long to look up: it cannot decide
    answer = guard(project, "--lead", stdin=event(project / "README.md", project), env=env)
    assert answer.returncode == 0, answer.stderr
    decision = json.loads(answer.stdout)["hookSpecificOutput"]
    assert decision["permissionDecision"] == "deny"
    assert "cannot look for the token secret" in decision["permissionDecisionReason"]

"""verify_task over MCP (both SDK client modes) and ``handoff-mcp verify`` from the shell: a task's
acceptance checks, given to create_task, replayed at its checkpoint; status and read_handoff show it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from server.cli import main
from tests.support.calc import PYTEST, RIGHT, calc_repo
from tests.support.calls import call, refused, report_args, task_args
from tests.support.changes import CHANGE
from tests.support.gitrepo import add_worktree, commit_all, write
from tests.support.wire import SCRIPT

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def dispatched(lead: Client, project: Path, **checks: Any) -> tuple[dict[str, Any], Path]:
    calc_repo(project)
    tree = add_worktree(project, "task-a")
    args = task_args(workspace="required", worktree=str(tree), branch="task-a", writable=["src/**"], shared=[])
    created = await call(lead, "create_task", **args, acceptance_checks=[{"run": PYTEST, "timeout_s": 120, **checks}])
    return created, tree


async def test_a_task_verified_over_mcp_is_shown_in_status_and_read_handoff(
    lead: Client, executor: Client, project: Path
) -> None:
    created, tree = await dispatched(lead, project)
    text = Path(created["task_path"]).read_text()
    assert f"  1. `{PYTEST}` (in `.`, at most 120 s)" in text
    write(tree, "src/calc/__init__.py", RIGHT)
    checkpoint = commit_all(tree)
    said = f"`{PYTEST}`: exit 0"
    await call(executor, "write_report", **report_args(created, source_checkpoint=checkpoint, verification=said))
    found = await call(lead, "verify_task", ref=created["ref"])
    assert (found["verdict"], found["replayed"], found["flags"]) == ("passed", f"checkpoint {checkpoint}", [])
    (check,) = found["checks"]
    assert (check["run"], check["exit_code"], check["why"], check["claimed"]) == (PYTEST, 0, "", True)
    assert "1 passed" in check["tail"]
    status = await call(lead, "handoff_status", change=CHANGE, view="all")
    assert [(t["verification"], t["attention"]) for t in status["tasks"]] == [("passed", "")]
    shown = await call(lead, "read_handoff", ref=created["ref"])
    assert shown["verification"] == "passed: every check (1) passed on replay"


async def test_a_false_green_found_over_mcp_needs_the_leads_attention(
    lead: Client, executor: Client, project: Path
) -> None:
    created, tree = await dispatched(lead, project)
    write(tree, "src/calc/extra.py", "X = 1\n")  # the bug stays
    said = f"`{PYTEST}`: exit 0 (1 passed)"
    args = report_args(created, source_checkpoint=commit_all(tree), verification=said)
    await call(executor, "write_report", **args)
    found = await call(lead, "verify_task", ref=created["ref"])
    assert found["verdict"] == "failed"
    assert found["flags"] == [f"the REPORT claims `{PYTEST}` passed; on replay it exited 1"]
    (task,) = (await call(lead, "handoff_status", change=CHANGE))["tasks"]  # the default view: what needs the Lead
    assert task["verification"] == "failed"
    assert task["attention"].startswith("verification failed: 1 of 1 check(s) failed on replay")


async def test_acceptance_checks_are_refused_when_they_cannot_be_held(lead: Client) -> None:
    bad = [{"run": "pytest\n-q"}]
    assert await refused(lead, "create_task", **task_args(), acceptance_checks=bad) == "invalid_content"


async def test_verify_task_is_the_leads_only(executor: Client) -> None:
    assert "verify_task" not in {t.name for t in (await executor.list_tools()).tools}


async def test_the_command_line_verifies_and_status_json_shows_it(
    lead: Client, executor: Client, project: Path, secret_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    created, tree = await dispatched(lead, project, timeout_s=60)
    write(tree, "src/calc/__init__.py", RIGHT)
    await call(executor, "write_report", **report_args(created, source_checkpoint=commit_all(tree)))
    roots = ["--project-root", str(project), "--secret-file", str(secret_file)]
    code = main(["verify", "--ref", created["ref"], "--json", *roots])
    out, _ = capsys.readouterr()
    assert code == 0, out
    shown = json.loads(out)
    assert (shown["verdict"], shown["recorded"], shown["checks"][0]["exit_code"]) == ("passed", True, 0)
    assert main(["verify", "--ref", created["ref"], *roots]) == 0
    printed, _ = capsys.readouterr()
    assert printed.startswith("verification: passed: every check (1) passed on replay\n")
    assert f"check 1: {PYTEST} (in .): passed" in printed
    assert main(["status", "--json", *roots]) == 0
    (task,) = json.loads(capsys.readouterr()[0])["tasks"]
    assert task["verification"] == "passed"


async def test_the_command_exits_one_naming_the_failed_check(
    lead: Client, executor: Client, project: Path, secret_file: Path
) -> None:
    created, tree = await dispatched(lead, project)
    write(tree, "src/calc/extra.py", "X = 1\n")
    await call(executor, "write_report", **report_args(created, source_checkpoint=commit_all(tree)))
    command = [str(SCRIPT), "verify", "--ref", created["ref"], "--project-root", str(project)]
    done = subprocess.run(
        [*command, "--secret-file", str(secret_file)], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("verification: failed: 1 of 1 check(s) failed on replay")
    assert f"check 1: {PYTEST} (in .): exited 1" in done.stdout

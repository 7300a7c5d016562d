"""Where users run it: an executor under another HOME or Unix user, in a linked worktree, from a
subdirectory; each one a real server process over stdio, started the way a client would start it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from server.config import Settings
from server.mcp.app import build_server
from tests.support.calls import FOCUS, call, refused, task_args
from tests.support.changes import make_change
from tests.support.content import text_of
from tests.support.stdio import write_report_call

pytestmark = pytest.mark.anyio
REPORT = {"status": "completed", "focused": FOCUS, "artifacts": "src/a1/x.py", "verification": "pytest: exit 0"}
REPO = Path(__file__).resolve().parents[2]


def from_config(created: dict[str, Any], **overrides: Any) -> StdioServerParameters:
    """The executor server exactly as ``executor_config`` tells Claude Code to start it."""
    entry = json.loads(created["executor_config"]["claude_code_mcp_json"])["mcpServers"]["handoff"]
    return StdioServerParameters(command=entry["command"], args=entry["args"], **overrides)


async def dispatch(settings: Settings, **overrides: Any) -> dict[str, Any]:
    async with Client(build_server(settings)) as lead:
        return await call(lead, "create_task", **task_args(**overrides))


@pytest.mark.slow
async def test_an_executor_under_another_home_publishes_with_the_dispatched_token(
    settings_for: Any, tmp_path: Path
) -> None:
    first = await dispatch(settings_for("lead"))
    second = await dispatch(settings_for("lead"), topic="review-a1", kind="review", workspace="", writable=[])
    home = tmp_path / "another-home"
    home.mkdir()
    async with Client(from_config(first, env={"HOME": str(home)})) as executor:
        forged = {**write_report_call(first["dispatch_message"]), "token": "A" * 24}
        assert await refused(executor, "write_report", **REPORT, **forged) == "token_refused"
        crossed = {**write_report_call(first["dispatch_message"]), "token": second["report_token"]}
        assert await refused(executor, "write_report", **REPORT, **crossed) == "token_refused"
        written = await call(executor, "write_report", **REPORT, **write_report_call(first["dispatch_message"]))
    assert written["created"]
    assert not list(home.rglob("secret"))  # the executor needed no secret of its own


@pytest.fixture
def shared_project() -> Iterator[Path]:
    """A project another Unix user can reach: pytest's own temp folder is private to root."""
    folder = Path(tempfile.mkdtemp(prefix="handoff-shared-"))
    folder.chmod(0o777)
    project = folder / "project"
    make_change(project / "speculo" / ".speculo")
    try:
        yield project
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def as_nobody(command: list[str]) -> list[str]:
    site = next(Path(sys.prefix).glob("lib/python3*/site-packages"))
    python = "/usr/bin/python3"
    env = ["env", f"PYTHONPATH={REPO}:{site}", "HOME=/nonexistent"]
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *env, python, *command]


def nobody_can_run_the_server() -> bool:
    if os.geteuid() != 0 or not shutil.which("setpriv") or not Path("/usr/bin/python3").exists():
        return False
    probe = subprocess.run(as_nobody(["-c", "import server.mcp.app"]), capture_output=True, timeout=60, check=False)
    return probe.returncode == 0


@pytest.mark.slow
async def test_an_executor_running_as_another_unix_user_publishes_its_report(
    shared_project: Path, tmp_path: Path
) -> None:
    if not nobody_can_run_the_server():
        pytest.skip("cannot start a process as another user here (needs root, setpriv and a system Python 3.11)")
    state = shared_project / "speculo" / ".speculo"
    lead = Settings(role="lead", project_root=shared_project, state_root=state, secret_file=tmp_path / "secret")
    created = await dispatch(lead)
    for path in [shared_project, *shared_project.rglob("*")]:
        if path.is_dir():
            path.chmod(0o777)  # the team shares the tree; here, with everyone
    entry = json.loads(created["executor_config"]["claude_code_mcp_json"])["mcpServers"]["handoff"]
    command = as_nobody(["-m", "server", *entry["args"]])
    async with Client(StdioServerParameters(command=command[0], args=command[1:])) as executor:
        crossed = {**write_report_call(created["dispatch_message"]), "token": "B" * 24}
        assert await refused(executor, "write_report", **REPORT, **crossed) == "token_refused"
        written = await call(executor, "write_report", **REPORT, **write_report_call(created["dispatch_message"]))
    assert written["created"]
    report = Path(written["path"])
    assert report.stat().st_uid == 65534


def git(cwd: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, timeout=60)


@pytest.mark.slow
@pytest.mark.parametrize("flags", ["default", "the worktree as project root"])
async def test_a_worker_in_a_linked_worktree_reports_into_the_leads_tree(
    settings_for: Any, project: Path, tmp_path: Path, flags: str
) -> None:
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "a change with its handoff tree")
    worktree = tmp_path / "worker-wt"
    git(project, "worktree", "add", "-q", str(worktree), "-b", "worker")
    created = await dispatch(settings_for("lead"))  # after the worktree: its copy never sees this TASK
    args = ["serve", "--role", "executor"] + (["--project-root", str(worktree)] if flags != "default" else [])
    entry = json.loads(created["executor_config"]["claude_code_mcp_json"])["mcpServers"]["handoff"]
    async with Client(StdioServerParameters(command=entry["command"], args=args, cwd=str(worktree))) as executor:
        task = await call(executor, "read_task", ref=created["ref"])
        assert task["task_sha256"] == created["task_sha256"]
        written = await call(executor, "write_report", **REPORT, **write_report_call(created["dispatch_message"]))
    assert Path(written["path"]).is_relative_to(project)
    assert Path(written["path"]).exists()
    assert not list(worktree.rglob("REPORT.md"))


@pytest.mark.slow
async def test_a_server_started_in_a_subdirectory_finds_the_projects_tasks(
    settings_for: Any, project: Path, state_root: Path
) -> None:
    created = await dispatch(settings_for("lead"))
    deep = project / "src" / "deep"
    deep.mkdir(parents=True)
    entry = json.loads(created["executor_config"]["claude_code_mcp_json"])["mcpServers"]["handoff"]
    params = StdioServerParameters(command=entry["command"], args=["serve", "--role", "executor"], cwd=str(deep))
    async with Client(params) as executor:
        status = await call(executor, "handoff_status")
    assert [task["ref"] for task in status["tasks"]] == [created["ref"]]
    assert status["state_root"] == str(state_root)


async def test_an_executor_calling_a_lead_tool_is_told_its_role_and_the_way_out(executor: Client) -> None:
    result = await executor.call_tool("create_task", task_args())
    assert result.is_error
    text = text_of(result)
    assert text.startswith("Error executing tool create_task: role_refused: create_task is a Lead tool")
    assert "executor" in text


async def test_argument_errors_are_one_short_line_per_field(lead: Client) -> None:
    arguments = {key: value for key, value in task_args(kind="bogus").items() if key != "goal"}
    result = await lead.call_tool("create_task", arguments)
    assert result.is_error
    text = text_of(result)
    assert text.startswith("Error executing tool create_task: invalid_arguments: ")
    assert "kind: must be one of 'implementation', 'review', 'research' or 'test-observation'" in text
    assert "goal: field required" in text
    assert "http" not in text
    assert len(text) < 300

"""An executor on a second machine: its own HOME and clone (no handoff tree), a bare repository as the
shared remote, the team server on 127.0.0.1. It runs what the dispatch printed, is guarded by the
team server's TASK, pushes, reports; the Lead audits through the remote."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from tests.support.calls import call, refused, task_args
from tests.support.gitrepo import git, make_repo, write
from tests.support.remote import Elsewhere
from tests.support.team import REPORT, Team

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # git, the guard and its hooks run as processes


class Launch:
    """What the dispatch printed for Claude Code over HTTP: set-up lines, then the claude command line."""

    def __init__(self, created: dict[str, Any]) -> None:
        *self.setup, self.claude = created["executor_config"]["claude_code_cli"].splitlines()
        self.token: str = created["report_token"]
        settings = json.loads(shlex.split(self.claude)[shlex.split(self.claude).index("--settings") + 1])
        self.hook: str = settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"]


def write_event(path: Path, cwd: Path) -> str:
    tool = {"file_path": str(path), "content": "x\n"}
    return json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": tool, "cwd": str(cwd)})


async def dispatch_branch(team: Team, topic: str, branch: str) -> dict[str, Any]:
    args = task_args(topic=topic, workspace="required", branch=branch, shared=[])
    async with team.lead() as lead:
        return await call(lead, "create_task", **args)


async def report_and_audit(team: Team, created: dict[str, Any], checkpoint: str) -> dict[str, Any]:
    report = {"ref": created["ref"], "token": created["report_token"], "task_sha256": created["task_sha256"]}
    async with team.client("executor", created["report_token"]) as executor:
        await call(executor, "write_report", **report, **REPORT, source_checkpoint=checkpoint)
    async with team.lead() as lead:
        return await call(lead, "audit_task", ref=created["ref"])


async def test_an_executor_elsewhere_is_guarded_by_the_team_server_and_audited_through_the_remote(
    team: Team, elsewhere: Elsewhere, project: Path
) -> None:
    created = await dispatch_branch(team, "stray-write", "task-a1")
    assert f"branch task-a1 of the git remote origin ({elsewhere.bare})" in created["dispatch_message"]
    launch = Launch(created)
    await elsewhere.sh("git checkout -q -b task-a1")
    setup = await elsewhere.sh(" && ".join(launch.setup))
    assert setup.returncode == 0, setup.stderr
    inside, stray = elsewhere.clone / "src/a1/new.py", elsewhere.clone / "src/b/other.py"
    allowed = await elsewhere.sh(launch.hook, launch.token, stdin=write_event(inside, elsewhere.clone))
    assert (allowed.returncode, allowed.stdout) == (0, ""), allowed.stderr
    denied = await elsewhere.sh(launch.hook, launch.token, stdin=write_event(stray, elsewhere.clone))
    answer = json.loads(denied.stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny"
    assert "src/b/other.py" in answer["permissionDecisionReason"]
    # The stray write lands anyway (say through a shell): the clone's pre-commit hook refuses it.
    write(elsewhere.clone, "src/a1/new.py")
    write(elsewhere.clone, "src/b/other.py", "changed\n")
    committed = await elsewhere.sh("git add -A && git commit -q -m work", launch.token)
    assert committed.returncode != 0
    assert "src/b/other.py" in committed.stderr
    # An executor that skips the hook and pushes is caught by the Lead's audit, through the remote.
    await elsewhere.sh("git commit -q --no-verify -m work && git push -q origin task-a1", launch.token)
    checkpoint = (await elsewhere.sh("git rev-parse HEAD")).stdout.strip()
    audited = await report_and_audit(team, created, checkpoint)
    assert audited["verdict"] == "failed"
    assert [v["path"] for v in audited["violations"]] == ["src/b/other.py"]
    assert git(project, "for-each-ref", "refs/heads", "refs/remotes").stdout.count("task-a1") == 0


async def test_a_clean_run_elsewhere_passes_the_audit(team: Team, elsewhere: Elsewhere) -> None:
    created = await dispatch_branch(team, "clean", "task-a2")
    launch = Launch(created)
    await elsewhere.sh("git checkout -q -b task-a2")
    assert (await elsewhere.sh(" && ".join(launch.setup))).returncode == 0
    write(elsewhere.clone, "src/a1/done.py")
    pushed = await elsewhere.sh("git add -A && git commit -q -m done && git push -q origin task-a2", launch.token)
    assert pushed.returncode == 0, pushed.stderr
    checkpoint = (await elsewhere.sh("git rev-parse HEAD")).stdout.strip()
    audited = await report_and_audit(team, created, checkpoint)
    assert (audited["verdict"], audited["changed"]) == ("passed", ["A src/a1/done.py"])


async def test_a_checkpoint_the_remote_does_not_hold_is_unknown(team: Team, elsewhere: Elsewhere) -> None:
    created = await dispatch_branch(team, "unpushed", "task-a3")
    await elsewhere.sh("git checkout -q -b task-a3")
    write(elsewhere.clone, "src/a1/late.py")
    await elsewhere.sh("git add -A && git commit -q --no-verify -m late")
    checkpoint = (await elsewhere.sh("git rev-parse HEAD")).stdout.strip()
    audited = await report_and_audit(team, created, checkpoint)
    assert audited["verdict"] == "unknown"
    assert "cannot be fetched" in audited["reason"]


async def test_the_guard_denies_when_it_cannot_ask_and_nothing_is_cached(team: Team, elsewhere: Elsewhere) -> None:
    created = await dispatch_branch(team, "unreachable", "task-a4")
    launch = Launch(created)
    port = team.endpoint.url("executor").split(":")[2].split("/")[0]
    cut = launch.hook.replace(f":{port}/", ":9/")  # the discard port: nothing answers there
    answer = await elsewhere.sh(cut, launch.token, stdin=write_event(elsewhere.clone / "src/a1/x.py", elsewhere.clone))
    assert json.loads(answer.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "cannot reach the team server" in answer.stdout


async def test_a_cached_task_serves_when_the_server_is_gone_and_a_wrong_pin_is_denied(
    team: Team, elsewhere: Elsewhere
) -> None:
    created = await dispatch_branch(team, "cached", "task-a5")
    launch = Launch(created)
    event = write_event(elsewhere.clone / "src/a1/x.py", elsewhere.clone)
    assert (await elsewhere.sh(launch.hook, launch.token, stdin=event)).stdout == ""  # asked, then cached
    port = team.endpoint.url("executor").split(":")[2].split("/")[0]
    cut = launch.hook.replace(f":{port}/", ":9/")
    assert (await elsewhere.sh(cut, launch.token, stdin=event)).stdout == ""  # the cache answers
    wrong = launch.hook.replace(created["task_sha256"], "0" * 64)
    denied = await elsewhere.sh(wrong, launch.token, stdin=event)
    assert json.loads(denied.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "does not hash to the sha256" in denied.stdout
    assert (await elsewhere.sh(launch.hook, "wrong-token", stdin=event)).stdout == ""  # cached: no ask
    assert len(list((elsewhere.home / ".cache/handoff-mcp/tasks").glob("*.md"))) == 1


async def test_a_branch_task_needs_a_remote_that_holds_its_start(team: Team, project: Path) -> None:
    make_repo(project)  # no remote at all
    async with team.lead() as lead:
        code = await refused(
            lead, "create_task", **task_args(topic="no-remote", workspace="required", branch="b", shared=[])
        )
    assert code == "workspace_refused"


def stop_hook(created: dict[str, Any]) -> str:
    """The Stop hook's command in the Claude Code line the dispatch printed."""
    words = shlex.split(Launch(created).claude)
    return str(json.loads(words[words.index("--settings") + 1])["hooks"]["Stop"][0]["hooks"][0]["command"])


def stop_event(session: str, active: bool = False) -> str:
    return json.dumps({"hook_event_name": "Stop", "session_id": session, "cwd": "/", "stop_hook_active": active})


async def test_an_executor_elsewhere_cannot_end_without_its_report_and_the_team_server_keeps_the_record(
    team: Team, elsewhere: Elsewhere
) -> None:
    created = await dispatch_branch(team, "stops", "task-a6")
    settings = json.loads(
        shlex.split(Launch(created).claude)[shlex.split(Launch(created).claude).index("--settings") + 1]
    )
    stop = settings["hooks"]["Stop"][0]["hooks"][0]["command"]
    answers = [await elsewhere.sh(stop, created["report_token"], stdin=stop_event("s1")) for _ in range(4)]
    blocked = [json.loads(answer.stdout) for answer in answers[:3]]
    assert all(b["decision"] == "block" and "write_report" in b["reason"] for b in blocked), answers[0]
    assert (answers[3].returncode, answers[3].stdout) == (0, "")
    # The count and the record are the team server's: nothing in the executor's own cache says how it ended.
    cache = elsewhere.home / ".cache" / "handoff-mcp"
    assert not (cache / "stop-blocks").exists()
    assert not (cache / "endings").exists()
    async with team.lead() as lead:
        status = await call(lead, "handoff_status")
    (row,) = [t for t in status["tasks"] if t["ref"] == created["ref"]]
    assert any("ended without a report (session s1)" in problem for problem in row["problems"]), row


async def test_a_stop_hook_without_the_tasks_token_records_nothing_on_the_team_server(
    team: Team, elsewhere: Elsewhere
) -> None:
    created = await dispatch_branch(team, "forged", "task-a7")
    settings = json.loads(
        shlex.split(Launch(created).claude)[shlex.split(Launch(created).claude).index("--settings") + 1]
    )
    stop = settings["hooks"]["Stop"][0]["hooks"][0]["command"]
    for active in (False, True, True, True):  # a count forged from elsewhere: the server is not reached
        answer = await elsewhere.sh(stop, "not-the-token", stdin=stop_event("s2", active))
        assert answer.stdout == "" if active else json.loads(answer.stdout)["decision"] == "block"
    async with team.lead() as lead:
        status = await call(lead, "handoff_status")
    (row,) = [t for t in status["tasks"] if t["ref"] == created["ref"]]
    assert not any("ended without a report" in problem for problem in row["problems"]), row


async def test_launch_lines_printed_on_the_executors_machine_start_the_lean_hook_which_judges_as_the_printed_one(
    team: Team, elsewhere: Elsewhere
) -> None:
    created = await dispatch_branch(team, "printed-here", "task-a8")
    url = team.endpoint.url("executor")
    config = f'handoff-mcp config --role executor --client claude-code-cli --url {url} --token "$HANDOFF_TOKEN"'
    printed = await elsewhere.sh(f"{config} --ref {created['ref']}", created["report_token"])
    assert printed.returncode == 0, printed.stderr
    here = Launch({"executor_config": {"claude_code_cli": printed.stdout}, "report_token": created["report_token"]})
    hook = shlex.split(here.hook)
    assert hook[1:3] == ["-I", "-S"]  # no site, no console script
    assert hook[3].endswith("hook_process.py")
    assert "--install-git-hook" in here.setup[-1]  # the clone's pre-commit hook is still the console script's
    for path in ("src/a1/new.py", "src/b/other.py"):
        event = write_event(elsewhere.clone / path, elsewhere.clone)
        lean = await elsewhere.sh(here.hook, here.token, stdin=event)
        served = await elsewhere.sh(Launch(created).hook, here.token, stdin=event)
        assert (lean.returncode, lean.stdout) == (served.returncode, served.stdout), lean.stderr
    assert "deny" in lean.stdout  # the stray path: both denied it

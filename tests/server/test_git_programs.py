"""No git the product starts, nor any git that git starts, runs a program the executor named.

The executor writes the repository's config. A partial-clone config (``extensions.partialClone``, a
promisor remote whose ``uploadpack`` is a shell command) makes git fetch a missing object on its
own: a child ``git fetch`` runs that command. So the executor plants one, with a REPORT whose
checkpoint and a worktree ``HEAD`` that name a missing object, and every entry point that runs git
is driven: the Lead's tools over the real MCP SDK client (``audit_task``, ``read_handoff``,
``handoff_status``, a dispatch), ``handoff-mcp status`` as a process, the board's data, and the
executor's hooks as the agent CLIs start them. The command never runs."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from mcp import Client

from handoff_core.services.writing.store import Store
from server.client_config import hook_entry
from server.config import Settings
from server.mcp.app import build_server
from server.mcp.services import open_store
from server.web.board_model import BoardModel
from tests.support.calls import call, report_args, task_args
from tests.support.changes import CHANGE
from tests.support.gitrepo import ENV, add_worktree, git, make_repo

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # real git, the CLI and the hook as processes
HANDOFF_MCP = Path(sys.executable).parent / "handoff-mcp"
MISSING = "0123456789abcdef0123456789abcdef01234567"  # an object no repository here holds


def plant_promisor(project: Path, marker: Path) -> None:
    """What the executor's shell writes into the repository's config: a partial clone whose promisor
    remote's ``uploadpack`` is a command of its choosing (here: one that leaves ``marker``)."""
    command = f"touch {shlex.quote(str(marker))}; false"
    for key, value in (
        ("core.repositoryformatversion", "1"),
        ("extensions.partialClone", "promised"),
        ("remote.promised.url", str(project)),
        ("remote.promised.promisor", "true"),
        ("remote.promised.uploadpack", command),
    ):
        git(project, "config", key, value)


def lead_settings(settings_for: Callable[[str], Settings], folder: Path) -> Settings:
    """The Lead's settings with a cache of their own: each entry point judges afresh, none reuses another's."""
    folder.mkdir()
    return Settings(**{**vars(settings_for("lead")), "cache_dir": folder, "writer_cap": 4})


def hook(ref: str, sha: str, event: str, data: dict[str, object], store: Store) -> subprocess.CompletedProcess[bytes]:
    """The executor's hook as a printed launch line starts it (``python -I -S hook_process.py``)."""
    roots = ["--project-root", str(store.roots.project_root), "--state-root", str(store.roots.state_root)]
    flags = ["--ref", ref, "--task-sha256", sha, "--event", event, "--client", "claude-code", *roots]
    return subprocess.run(
        [*hook_entry(), *flags], input=json.dumps(data).encode(), capture_output=True, timeout=60, env=ENV, check=False
    )


async def refused_or_done(client: Client, name: str, **arguments: object) -> None:
    """A call whose answer does not matter here (a git that fails may refuse it), only what it ran."""
    await client.call_tool(name, arguments)


async def test_a_promisor_remote_the_executor_plants_runs_in_no_git_the_product_starts(
    settings_for: Callable[[str], Settings], project: Path, secret_file: Path, tmp_path: Path
) -> None:
    make_repo(project)
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", str(origin))
    git(project, "remote", "add", "origin", str(origin))
    git(project, "push", "-q", "origin", "main", "main:task-b")
    tree = add_worktree(project, "task-a")
    marker = tmp_path / "the-executors-program-ran"
    ran: list[str] = []

    def seen(entry: str) -> None:
        if marker.exists():
            ran.append(entry)
            marker.unlink()

    async with (
        Client(build_server(lead_settings(settings_for, tmp_path / "cache-dispatch"))) as lead,
        Client(build_server(settings_for("executor"))) as executor,
    ):
        in_worktree = task_args(workspace="required", worktree=str(tree), branch="task-a", shared=[], writer_limit=3)
        on_remote = task_args(topic="pushed", workspace="required", branch="task-b", writable=["docs/**"], shared=[],
                              writer_limit=3)  # fmt: skip
        created = [await call(lead, "create_task", **args) for args in (in_worktree, on_remote)]
        plant_promisor(project, marker)
        planted = project / ".git" / "refs" / "remotes" / "origin" / "planted"
        planted.write_text(MISSING + "\n")  # a remote-tracking branch the dispatch's ancestry walk reads
        for one in created:
            await call(executor, "write_report", **report_args(one, source_checkpoint=MISSING))
        seen("write_report")
        new_branch = task_args(topic="third", workspace="required", branch="task-c", writable=["lib/**"], shared=[],
                               writer_limit=3)  # fmt: skip
        await refused_or_done(lead, "create_task", **new_branch)  # its base: HEAD, which origin must hold
        seen("create_task")
        planted.unlink()  # else the audit's fetch stops at it ("bad object") before any ancestry is asked
    asked = [("audit_task", {"ref": one["ref"]}) for one in created]
    asked += [("read_handoff", {"ref": created[0]["ref"]}), ("handoff_status", {"change": CHANGE, "view": "all"})]
    answers = []
    for number, (tool, args) in enumerate(asked):
        async with Client(build_server(lead_settings(settings_for, tmp_path / f"cache-{number}"))) as fresh:
            answers.append(await call(fresh, tool, **args))
        seen(f"{tool} {args.get('ref', '')}".strip())
    assert [answer["verdict"] for answer in answers[:2]] == ["unknown", "unknown"]  # a missing checkpoint
    env = ENV | {"HANDOFF_ROLE": "lead", "HANDOFF_CACHE_DIR": str(tmp_path / "cache-cli"), "HOME": str(tmp_path)}
    status = [str(HANDOFF_MCP), "status", "--json", "--project-root", str(project), "--secret-file", str(secret_file)]
    shown = subprocess.run(status, capture_output=True, text=True, timeout=60, env=env, check=False)
    assert shown.returncode == 0, shown.stderr
    seen("handoff-mcp status")
    board = BoardModel(open_store(lead_settings(settings_for, tmp_path / "cache-board")).queries, 3)
    board.load()
    board.page(CHANGE, 0)
    seen("board")
    (project / ".git" / "worktrees" / tree.name / "HEAD").write_text(MISSING + "\n")  # the hooks' git status reads it
    store = Store(project / "speculo" / ".speculo", project)
    bash = {"tool_name": "Bash", "tool_input": {"command": "git add -A"}, "cwd": str(tree), "session_id": "s"}
    ref, sha = created[0]["ref"], created[0]["task_sha256"]
    before = hook(ref, sha, "pre-tool", {"hook_event_name": "PreToolUse", **bash}, store)
    seen("pre-tool hook")
    after = hook(ref, sha, "post-tool", {"hook_event_name": "PostToolUse", **bash}, store)
    seen("post-tool hook")
    assert json.loads(before.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"  # git failed: no guess
    assert json.loads(after.stdout)["decision"] == "block"
    assert ran == [], " | ".join(ran)
    git(project, "cat-file", "-e", MISSING, check=False)  # the plant is live: a plain git runs the command
    assert marker.exists()

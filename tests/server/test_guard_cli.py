"""``handoff-mcp guard`` as the agent CLIs and git run it: real subprocesses, real repositories."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from bench.requests import implementation
from handoff_core.contract.ids import Ref
from handoff_core.contract.scope import Scope
from handoff_core.services.writing.store import Store
from server.cli import main
from tests.support.cli import cli, run
from tests.support.gitrepo import ENV, add_worktree, git, make_repo, write
from tests.support.guard_calls import event, guard

pytestmark = pytest.mark.slow  # every test here runs handoff-mcp guard, git or an agent CLI as a process


@pytest.fixture
def worktree(project: Path) -> Path:
    make_repo(project)
    return add_worktree(project, "task-a")


@pytest.fixture
def ref(store: Store, worktree: Path) -> Ref:
    scope = Scope(workspace="required", writable=("src/a1/**",), worktree=str(worktree), branch="task-a")
    return store.create_task(implementation(scope=scope)).ref


def test_the_hook_answers_a_deny_in_the_documented_form_and_nothing_for_an_allow(
    project: Path, ref: Ref, worktree: Path
) -> None:
    allowed = guard(project, "--ref", str(ref), stdin=event(worktree / "src/a1/x.py", worktree))
    assert (allowed.returncode, allowed.stdout) == (0, "")
    denied = guard(project, "--ref", str(ref), stdin=event(worktree / "src/b/other.py", worktree))
    assert denied.returncode == 0
    answer = json.loads(denied.stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny"
    assert "src/b/other.py" in answer["permissionDecisionReason"]


def test_an_unknown_ref_or_a_malformed_event_is_a_deny(project: Path, ref: Ref, worktree: Path) -> None:
    for args, stdin in (
        (["--ref", "2026-11-30-demo/20261130T000000Z/001-x"], event(worktree / "a", worktree)),
        (["--ref", str(ref)], "{"),
    ):
        answer = json.loads(guard(project, *args, stdin=stdin).stdout)
        assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"


@pytest.mark.parametrize("args", [[], ["--bogus"], ["--ref"], ["--uninstall"], ["--ref", "x", "--pre-commit"]])
def test_an_argument_error_is_neither_an_allow_nor_a_deny(project: Path, args: list[str]) -> None:
    result = guard(project, *args)
    assert result.returncode == 64
    assert result.stdout == ""
    assert "usage" in result.stderr.lower()


def commit(tree: Path, *paths: str) -> subprocess.CompletedProcess[str]:
    for path in paths:
        write(tree, path, f"{path}\n")
    git(tree, "add", "-A")
    return git(tree, "commit", "-q", "-m", "work", check=False)


def test_the_git_hook_refuses_a_commit_outside_the_scope_and_admits_one_inside(
    project: Path, ref: Ref, worktree: Path
) -> None:
    installed = guard(project, "--install-git-hook", "--ref", str(ref), cwd=worktree)
    assert installed.returncode == 0, installed.stderr
    assert commit(worktree, "src/a1/new.py").returncode == 0
    refused = commit(worktree, "src/a1/more.py", "src/b/other.py")
    assert refused.returncode != 0
    assert "src/b/other.py" in refused.stderr
    assert "src/a1/more.py:" not in refused.stderr
    git(worktree, "mv", "src/b/other.py", "src/a1/moved.py")  # a staged rename: its deleted side is outside
    renamed = git(worktree, "commit", "-q", "-m", "rename", check=False)
    assert renamed.returncode != 0
    assert "src/b/other.py" in renamed.stderr


def test_a_worktree_no_task_names_commits_freely(project: Path, ref: Ref) -> None:
    assert guard(project, "--install-git-hook", cwd=project).returncode == 0
    assert commit(project, "src/b/other.py").returncode == 0


def test_installing_is_idempotent_chains_an_existing_hook_and_uninstalling_restores_it(
    project: Path, ref: Ref, worktree: Path
) -> None:
    hooks = project / "custom-hooks"
    git(project, "config", "core.hooksPath", str(hooks))
    hooks.mkdir()
    theirs = hooks / "pre-commit"
    theirs.write_text("#!/bin/sh\necho theirs ran >&2\nexit 0\n")
    theirs.chmod(0o755)
    for _ in range(2):
        assert guard(project, "--install-git-hook", "--ref", str(ref), cwd=worktree).returncode == 0
    assert "handoff-mcp guard" in theirs.read_text()
    done = commit(worktree, "src/a1/new.py")
    assert done.returncode == 0
    assert "theirs ran" in done.stderr
    assert guard(project, "--install-git-hook", "--uninstall", cwd=worktree).returncode == 0
    assert theirs.read_text() == "#!/bin/sh\necho theirs ran >&2\nexit 0\n"
    assert commit(worktree, "src/b/other.py").returncode == 0  # no guard any more


def test_a_hook_installed_once_guards_every_task_worktree_without_a_ref(
    project: Path, ref: Ref, worktree: Path
) -> None:
    assert guard(project, "--install-git-hook", cwd=project).returncode == 0
    refused = commit(worktree, "src/b/other.py")
    assert refused.returncode != 0
    assert str(ref) in refused.stderr
    assert "src/b/other.py" in refused.stderr
    git(worktree, "reset", "-q", "--hard")
    assert commit(worktree, "src/a1/new.py").returncode == 0
    assert commit(project, "src/b/main-only.py").returncode == 0  # the main worktree: no task pins it


def test_a_global_core_hooks_path_gets_the_hook_where_git_runs_it(
    project: Path, ref: Ref, worktree: Path, tmp_path: Path
) -> None:
    hooks = tmp_path / "global-hooks"
    config = tmp_path / "gitconfig"
    config.write_text(f"[core]\n\thooksPath = {hooks}\n")
    env = {**ENV, "GIT_CONFIG_GLOBAL": str(config)}
    installed = guard(project, "--install-git-hook", cwd=worktree, env=env)
    assert installed.returncode == 0, installed.stderr
    assert str(hooks / "pre-commit") in installed.stdout
    write(worktree, "src/b/other.py", "changed\n")
    git(worktree, "add", "-A")
    refused = subprocess.run(
        ["git", "commit", "-q", "-m", "stray"],
        cwd=worktree,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert refused.returncode != 0
    assert "src/b/other.py" in refused.stderr


def test_a_relative_core_hooks_path_puts_no_hook_inside_a_task_worktree(project: Path, worktree: Path) -> None:
    git(project, "config", "core.hooksPath", ".githooks")
    refused = guard(project, "--install-git-hook", cwd=worktree)
    assert refused.returncode == 2
    assert "relative" in refused.stderr
    assert not (worktree / ".githooks").exists()
    assert git(worktree, "status", "--porcelain", "--untracked-files=all").stdout == ""


def test_a_foreign_hook_that_holds_the_marker_line_is_chained_not_lost(project: Path, ref: Ref) -> None:
    hooks = project / ".git" / "hooks"
    theirs = "#!/bin/sh\n# handoff-mcp guard pre-commit hook\necho theirs ran >&2\nexit 0\n"
    (hooks / "pre-commit").write_text(theirs)
    (hooks / "pre-commit").chmod(0o755)
    assert guard(project, "--install-git-hook", cwd=project).returncode == 0
    assert (hooks / "pre-commit.handoff-chained").read_text() == theirs
    assert "theirs ran" in commit(project, "src/b/x.py").stderr
    assert guard(project, "--install-git-hook", "--uninstall", cwd=project).returncode == 0
    assert (hooks / "pre-commit").read_text() == theirs


def test_a_ref_whose_task_names_another_worktree_is_refused_at_install(project: Path, ref: Ref) -> None:
    other = add_worktree(project, "task-b")
    result = guard(project, "--install-git-hook", "--ref", str(ref), cwd=other)
    assert result.returncode == 2
    assert "workspace_refused" in result.stderr or "names the worktree" in result.stderr


def printed_config(capsys: pytest.CaptureFixture[str], project: Path, ref: Ref, client: str) -> str:
    assert (
        main(["config", "--role", "executor", "--client", client, "--ref", str(ref), "--project-root", str(project)])
        == 0
    )
    return capsys.readouterr().out


def run_hook(command: str, data: str, cwd: Path) -> dict[str, object]:
    done = subprocess.run(
        ["sh", "-c", command], input=data, capture_output=True, text=True, timeout=60, check=False, cwd=cwd
    )
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout)["hookSpecificOutput"]) if done.stdout else {}


def test_the_printed_claude_code_launch_line_runs_the_guard_before_each_edit(
    project: Path, ref: Ref, worktree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    words = shlex.split(printed_config(capsys, project, ref, "claude-code-cli"))
    settings = json.loads(words[words.index("--settings") + 1])
    (entry,) = settings["hooks"]["PreToolUse"]
    assert entry["matcher"] == "Write|Edit|MultiEdit|NotebookEdit|Bash"
    command = entry["hooks"][0]["command"]
    assert shlex.split(command)[-4:] == ["--event", "pre-tool", "--client", "claude-code"]
    assert [e["hooks"][0]["command"].split()[-3] for e in settings["hooks"]["PostToolUse"]] == ["post-tool"]
    assert [e["hooks"][0]["command"].split()[-3] for e in settings["hooks"]["Stop"]] == ["stop"]
    assert run_hook(command, event(worktree / "src/b/other.py", worktree), worktree)["permissionDecision"] == "deny"
    assert run_hook(command, event(worktree / "src/a1/x.py", worktree), worktree) == {}
    # Claude Code takes a --settings value that is not JSON for a file name: ours loads as settings.
    claude, home = cli("claude"), tmp_path / "home"
    loaded = run([claude, "--settings", words[words.index("--settings") + 1], "mcp", "list"], project, home)
    assert loaded.returncode == 0, loaded.stderr
    assert "Settings file not found" not in loaded.stdout + loaded.stderr
    mangled = run([claude, "--settings", "{not json", "mcp", "list"], project, home)
    assert "Settings file not found" in mangled.stdout + mangled.stderr


def test_the_printed_codex_forms_load_in_codex_and_run_the_guard_for_apply_patch(
    project: Path, ref: Ref, worktree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = printed_config(capsys, project, ref, "codex")
    hooks = tomllib.loads(text)["hooks"]
    (entry,) = hooks["PreToolUse"]
    assert entry["matcher"] == "^apply_patch$|^Bash$"
    assert [e["hooks"][0]["command"].split()[-3] for e in hooks["PostToolUse"] + hooks["Stop"]] == ["post-tool", "stop"]
    patch = "*** Begin Patch\n*** Update File: src/a1/core.py\n*** Move to: src/b/core.py\n*** End Patch\n"
    data = json.dumps(
        {
            "hook_event_name": "PreToolUse",
            "tool_name": "apply_patch",
            "tool_input": {"command": patch},
            "cwd": str(worktree),
        }
    )
    assert run_hook(entry["hooks"][0]["command"], data, worktree)["permissionDecision"] == "deny"
    codex = cli("codex")
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "config.toml").write_text(text)
    assert run([codex, "mcp", "list", "--json"], project, home).returncode == 0  # the hooks table loads
    (home / ".codex" / "config.toml").write_text(text.replace('matcher = "^apply_patch$|^Bash$"', "matcher = 5"))
    assert run([codex, "mcp", "list", "--json"], project, home).returncode != 0  # and is read: a bad one is refused
    words = shlex.split(printed_config(capsys, project, ref, "codex-args"))
    assert words[:3] == ["env", "HANDOFF_ROLE=executor", f"HANDOFF_REF={ref}"]  # the role, and the task it works for
    words = words[3:]
    if words[0].startswith("HANDOFF_TOKEN="):  # its report token, when this side could derive it
        words = words[1:]
    assert words[:3] == [sys.executable, "-I", "-S"]  # started through its task's sandbox
    words = words[words.index("--") + 1 :]
    assert words[0] == "codex"
    assert words[-3:] == ["--dangerously-bypass-hook-trust", "--dangerously-bypass-approvals-and-sandbox", "exec"]
    (home / ".codex" / "config.toml").unlink()
    assert run([codex, *words[1:-1], "mcp", "list", "--json"], project, home).returncode == 0

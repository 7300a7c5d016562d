"""The post-tool hook as the agent CLIs start it (its own process): it sees a change outside the scope,
starts one git when the repository's config names no filter driver, and two (the listing first)
when it does, and the driver it names never runs; a rule in ``info/attributes`` or a submodule whose
config moves its work tree blocks the result, and a submodule's config as git writes it costs no
listing. Every git start is counted by a ``git`` first on ``PATH`` that logs its arguments and then
runs the real one."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from bench.requests import implementation
from handoff_core.contract.scope import Scope
from handoff_core.services.writing.store import Store
from server.client_config import hook_entry
from tests.support.gitrepo import ENV, add_worktree, counting_git, git, make_repo, started, write

pytestmark = pytest.mark.slow  # the hook runs as its own process
OUT_OF_SCOPE = "src/b/other.py"


def after_shell(store: Store, tree: Path, tmp_path: Path) -> tuple[str, list[str]]:
    """The hook's answer to a finished shell command in ``tree``, and the git commands it started. The
    event comes alone, with no pre-tool mark of its start: the other trees are not read (it says so;
    ``test_crossings`` reads them), so every git counted here is the task tree's."""
    scope = Scope(workspace="required", writable=("src/a1/**",), worktree=str(tree), branch="task-a")
    stored = store.create_task(implementation(scope=scope))
    log = tmp_path / "git-starts.log"
    folder = counting_git(tmp_path / "bin", log)
    roots = ["--project-root", str(store.roots.project_root), "--state-root", str(store.roots.state_root)]
    flags = ["--ref", str(stored.ref), "--task-sha256", stored.sha256, "--event", "post-tool", *roots]
    event = {"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"command": "make"}, "cwd": str(tree)}
    env = os.environ | {"PATH": f"{folder}{os.pathsep}{os.environ.get('PATH', os.defpath)}"}
    done = subprocess.run(
        [*hook_entry(), *flags], input=json.dumps(event).encode(), capture_output=True, timeout=60, env=env, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.decode(), started(log)


def blocked_for(answer: str) -> str:
    decision = json.loads(answer)
    assert decision["decision"] == "block"
    return str(decision["reason"])


def test_on_a_repository_whose_config_names_no_filter_the_hook_starts_one_git_and_sees_the_change(
    store: Store, project: Path, tmp_path: Path
) -> None:
    make_repo(project)
    tree = add_worktree(project, "task-a")
    write(tree, OUT_OF_SCOPE, "changed by the command\n")
    answer, starts = after_shell(store, tree, tmp_path)
    assert OUT_OF_SCOPE in blocked_for(answer)
    assert starts == ["status"]


def test_a_clean_filter_the_config_names_costs_the_listing_never_runs_and_hides_nothing(
    store: Store, project: Path, tmp_path: Path
) -> None:
    make_repo(project)
    tree = add_worktree(project, "task-a")
    marker = tmp_path / "filter-ran"
    write(tree, ".gitattributes", f"{OUT_OF_SCOPE} filter=pristine\n")
    git(tree, "add", ".gitattributes")
    git(tree, "commit", "-q", "-m", "attributes")
    git(tree, "config", "filter.pristine.clean", f"touch '{marker}'; printf 'x\\n'")  # the committed bytes
    git(tree, "config", "filter.pristine.required", "true")
    write(tree, OUT_OF_SCOPE, "y\n")
    assert OUT_OF_SCOPE not in git(tree, "status", "--porcelain").stdout  # the filter hides the edit from git
    marker.unlink()
    answer, starts = after_shell(store, tree, tmp_path)
    assert OUT_OF_SCOPE in blocked_for(answer)
    assert starts == ["config", "status"]
    assert not marker.exists()


def test_a_rule_in_info_attributes_blocks_the_result_before_any_git_starts(
    store: Store, project: Path, tmp_path: Path
) -> None:
    make_repo(project)
    tree = add_worktree(project, "task-a")
    (project / ".git" / "info").mkdir(exist_ok=True)
    (project / ".git" / "info" / "attributes").write_text(f"{OUT_OF_SCOPE} eol=crlf\n")
    (tree / OUT_OF_SCOPE).write_bytes((tree / OUT_OF_SCOPE).read_bytes().replace(b"\n", b"\r\n"))
    git(tree, "add", OUT_OF_SCOPE)  # the index learns the rewrite's stat; its blob is the committed one
    assert git(tree, "status", "--porcelain").stdout == ""  # the rule hides the rewrite from git
    answer, starts = after_shell(store, tree, tmp_path)
    assert "info/attributes" in blocked_for(answer)
    assert starts == []


def with_submodule(project: Path, tmp_path: Path) -> tuple[Path, Path]:
    """A task's worktree holding a committed submodule out of the scope (``git submodule add``, its git
    dir absorbed, ``core.worktree`` pointing back), and the submodule's folder."""
    library = tmp_path / "library"
    library.mkdir()
    make_repo(library)
    make_repo(project)
    tree = add_worktree(project, "task-a")
    git(tree, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library), "src/b/lib")
    git(tree, "commit", "-q", "-m", "library")
    sub = tree / "src/b/lib"
    assert (sub / ".git").is_file()
    assert git(sub, "config", "--get", "core.worktree").returncode == 0
    return tree, sub


def test_a_change_inside_a_submodule_is_seen_with_the_gitlink_listing_and_no_config_listing(
    store: Store, project: Path, tmp_path: Path
) -> None:
    tree, sub = with_submodule(project, tmp_path)
    write(sub, "README.md", "changed inside the submodule\n")
    answer, starts = after_shell(store, tree, tmp_path)
    assert "src/b/lib" in blocked_for(answer)
    assert starts == ["ls-files", "status"]


def test_a_submodule_whose_config_moves_its_work_tree_blocks_the_result(
    store: Store, project: Path, tmp_path: Path
) -> None:
    tree, sub = with_submodule(project, tmp_path)
    decoy = tmp_path / "decoy"
    shutil.copytree(sub, decoy, ignore=shutil.ignore_patterns(".git"))  # a clean copy of its files
    git(sub, "config", "core.worktree", str(decoy))
    write(sub, "README.md", "changed inside the submodule\n")
    assert git(tree, "status", "--porcelain", "--ignore-submodules=none").stdout == ""  # git is fooled
    answer, starts = after_shell(store, tree, tmp_path)
    assert "core.worktree" in blocked_for(answer)
    assert "status" not in starts


def hook_after(store: Store, ref: str, sha: str, cwd: Path, line: str) -> str:
    """Run ``line`` in ``cwd`` between the pre-tool and post-tool hooks, as a CLI runs a shell tool; the
    post-tool hook's answer."""
    roots = ["--project-root", str(store.roots.project_root), "--state-root", str(store.roots.state_root)]
    flags = ["--ref", ref, "--task-sha256", sha, *roots]
    event = {"tool_name": "Bash", "tool_input": {"command": line}, "cwd": str(cwd), "session_id": "s"}
    event["tool_use_id"] = "toolu_1"
    for kind in ("pre-tool", "post-tool"):
        name = {"pre-tool": "PreToolUse", "post-tool": "PostToolUse"}[kind]
        data = json.dumps(event | {"hook_event_name": name}).encode()
        done = subprocess.run(
            [*hook_entry(), *flags, "--event", kind], input=data, capture_output=True, timeout=60, check=False
        )
        assert done.returncode == 0, done.stderr
        if kind == "pre-tool":
            assert done.stdout == b"", done.stdout  # the parser does not read this form: it runs
            ran = subprocess.run(["bash", "-c", line], cwd=cwd, env=ENV, capture_output=True, timeout=60, check=False)
            assert ran.returncode == 0, ran.stderr
    return done.stdout.decode()


def test_a_commit_by_a_form_the_parser_does_not_read_is_named_at_once_in_a_task_that_authorises_none(
    store: Store, project: Path
) -> None:
    make_repo(project)
    stored = store.create_task(implementation())  # a current task: no git action authorised
    write(project, "src/a1/core.py", "mine\n")
    answer = hook_after(store, str(stored.ref), stored.sha256, project, "git add src/a1 && eval 'git commit -qm x'")
    reason = blocked_for(answer)
    assert "a commit (commit), by whatever command" in reason
    assert "git reset --soft" in reason


def test_a_worktree_whose_head_leaves_its_branch_is_named_at_once(store: Store, project: Path) -> None:
    make_repo(project)
    tree = add_worktree(project, "task-a")
    scope = Scope(workspace="required", writable=("src/a1/**",), worktree=str(tree), branch="task-a")
    stored = store.create_task(implementation(scope=scope))
    git(tree, "branch", "other")
    answer = hook_after(store, str(stored.ref), stored.sha256, tree, "eval 'git symbolic-ref HEAD refs/heads/other'")
    assert "HEAD: other is checked out, not the task's branch task-a (switch-branch)" in blocked_for(answer)

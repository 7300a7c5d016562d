"""The hook judges the documented PreToolUse events of Claude Code and Codex by the one scope rule
(in process: ``hook.run`` is what the ``guard`` command runs)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from bench.requests import implementation
from handoff_core.contract.ids import Ref
from handoff_core.contract.scope import Scope, SharedPath
from handoff_core.services.evidence.codex_patch import patch_paths
from handoff_core.services.evidence.hook import run
from handoff_core.services.writing.store import Store
from tests.support.gitrepo import add_worktree, make_repo


@pytest.fixture
def worktree(project: Path) -> Path:
    make_repo(project)
    return add_worktree(project, "task-a")


@pytest.fixture
def ref(store: Store, worktree: Path) -> Ref:
    shared = (SharedPath("pyproject.toml", "lead"),)
    scope = Scope(workspace="required", writable=("src/a1/**",), shared=shared, worktree=str(worktree), branch="task-a")
    return store.create_task(implementation(scope=scope)).ref


def claude(tool: str, path: str, cwd: Path) -> bytes:
    key = "notebook_path" if tool == "NotebookEdit" else "file_path"
    event = {"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": {key: path}}
    return json.dumps({**event, "cwd": str(cwd), "transcript_path": "/t.jsonl", "permission_mode": "default"}).encode()


def codex(patch: str, cwd: Path) -> bytes:
    event = {"hook_event_name": "PreToolUse", "tool_name": "apply_patch", "tool_input": {"command": patch}}
    return json.dumps({**event, "cwd": str(cwd), "session_id": "s", "model": "m", "tool_use_id": "c1"}).encode()


def answered(store: Store, ref: Ref, data: bytes, *flags: str) -> str:
    roots = ["--project-root", str(store.roots.project_root), "--state-root", str(store.roots.state_root)]
    out, err = io.StringIO(), io.StringIO()
    code = run(["--ref", str(ref), *flags, *roots], io.BytesIO(data), out, err)
    assert code == 0, err.getvalue()
    return out.getvalue()


def judged(store: Store, ref: Ref, data: bytes) -> tuple[bool, str]:
    answer = answered(store, ref, data)
    if not answer:
        return True, ""
    output = json.loads(answer)["hookSpecificOutput"]
    assert (output["hookEventName"], output["permissionDecision"]) == ("PreToolUse", "deny")
    return False, output["permissionDecisionReason"]


@pytest.mark.parametrize("tool", ["Write", "Edit", "MultiEdit", "NotebookEdit"])
def test_a_write_inside_the_scope_passes_and_one_outside_is_denied_naming_task_path_and_globs(
    store: Store, ref: Ref, worktree: Path, tool: str
) -> None:
    assert judged(store, ref, claude(tool, str(worktree / "src/a1/core.py"), worktree)) == (True, "")
    allow, reason = judged(store, ref, claude(tool, str(worktree / "src/b/other.py"), worktree))
    assert not allow
    assert str(ref) in reason
    assert str(worktree.resolve() / "src/b/other.py") in reason
    assert "src/a1/**" in reason


def test_traversal_and_symlinks_are_resolved_before_judging(store: Store, ref: Ref, worktree: Path) -> None:
    (worktree / "src/a1/escape").symlink_to(worktree / "src/b")
    for sneaky in ("src/a1/../b/other.py", "src/a1/escape/other.py"):
        assert not judged(store, ref, claude("Write", str(worktree / sneaky), worktree))[0], sneaky
    assert not judged(store, ref, claude("Write", "../../README.md", worktree / "src/a1"))[0]


def test_a_worktree_task_writes_only_in_its_own_worktree(
    store: Store, ref: Ref, worktree: Path, project: Path, tmp_path: Path
) -> None:
    other = add_worktree(project, "task-b")
    for path in (project / "src/a1/core.py", other / "src/a1/core.py"):
        allow, reason = judged(store, ref, claude("Write", str(path), worktree))
        assert not allow
        assert "worktree" in reason
    assert judged(store, ref, claude("Write", str(tmp_path / "scratch.txt"), worktree)) == (
        True,
        "",
    )  # not the project's


def test_the_handoff_tree_is_never_written_by_the_executor(store: Store, ref: Ref, worktree: Path) -> None:
    report = store.roots.task_dir(ref) / "REPORT.md"
    allow, reason = judged(store, ref, claude("Write", str(report), worktree))
    assert not allow
    assert "handoff tree" in reason


def test_a_shared_path_owned_by_another_is_denied(store: Store, ref: Ref, worktree: Path) -> None:
    allow, reason = judged(store, ref, claude("Edit", str(worktree / "pyproject.toml"), worktree))
    assert not allow
    assert "owned by lead" in reason


def test_a_codex_patch_is_judged_on_every_header_moves_included(store: Store, ref: Ref, worktree: Path) -> None:
    inside = (
        "*** Begin Patch\n*** Add File: src/a1/new.py\n+x\n*** Update File: src/a1/core.py\n@@\n-x\n+y\n*** End Patch\n"
    )
    assert judged(store, ref, codex(inside, worktree)) == (True, "")
    moved = "*** Begin Patch\n*** Update File: src/a1/core.py\n*** Move to: src/b/core.py\n@@\n-x\n+y\n*** End Patch\n"
    assert patch_paths(moved) == ["src/a1/core.py", "src/b/core.py"]
    assert not judged(store, ref, codex(moved, worktree))[0]
    deleted = "*** Begin Patch\n*** Delete File: src/b/other.py\n*** End Patch\n"
    assert not judged(store, ref, codex(deleted, worktree))[0]


@pytest.mark.parametrize(
    "data",
    [
        b"not json",
        b"[]",
        json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": {}, "cwd": "/"}).encode(),
        json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": {"file_path": "/x"}}).encode(),
        json.dumps(
            {"hook_event_name": "PostToolUse", "tool_name": "Write", "tool_input": {"file_path": "/x"}, "cwd": "/"}
        ).encode(),
        json.dumps(
            {
                "hook_event_name": "PreToolUse",
                "tool_name": "apply_patch",
                "tool_input": {"command": "no headers"},
                "cwd": "/",
            }
        ).encode(),
    ],
)
def test_a_malformed_event_is_a_deny_never_an_allow(store: Store, ref: Ref, data: bytes) -> None:
    allow, reason = judged(store, ref, data)
    assert not allow
    assert "denied" in reason


@pytest.mark.parametrize("spoiled", ["\0", chr(0xD800), chr(0xDC80)], ids=["nul", "high-surrogate", "low-surrogate"])
def test_a_path_or_a_cwd_that_names_no_file_is_denied_even_inside_the_scope(
    store: Store, ref: Ref, worktree: Path, spoiled: str
) -> None:
    """A NUL or a lone surrogate (``\\udc80`` too, which Python would read as the byte 0x80) names no file
    the CLI would write: the event is not judged as if it did."""
    inside = f"{worktree}/src/a1/x{spoiled}.py"
    assert not judged(store, ref, claude("Write", inside, worktree))[0]
    assert not judged(store, ref, claude("Write", f"{worktree}/src/a1/x.py", Path(f"{worktree}/{spoiled}")))[0]


def test_an_unknown_ref_is_a_deny(store: Store, ref: Ref, worktree: Path) -> None:
    unknown = Ref(ref.change, ref.session, "099-nothing")
    allow, reason = judged(store, unknown, claude("Write", str(worktree / "src/a1/core.py"), worktree))
    assert not allow
    assert "cannot use the task" in reason


def test_a_shell_command_that_writes_without_git_is_left_to_the_post_tool_check(
    store: Store, ref: Ref, worktree: Path
) -> None:
    event = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "echo > src/b/x"}}
    assert judged(store, ref, json.dumps({**event, "cwd": str(worktree)}).encode()) == (True, "")


def test_inside_a_sandbox_a_write_it_cannot_make_is_denied_with_why_before_the_kernel_refuses(
    store: Store, ref: Ref, worktree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    granted = f"{worktree}/src/a1/\n{worktree}/pyproject.toml"  # as a sandboxed launch lists them
    monkeypatch.setenv("HANDOFF_SANDBOX_WRITE", granted)
    assert judged(store, ref, claude("Write", str(worktree / "src/a1/deep/new.py"), worktree)) == (True, "")
    allowed, why = judged(store, ref, claude("Write", "/tmp/elsewhere.txt", worktree))
    assert not allowed
    assert "outside what the task's sandbox lets it write" in why
    monkeypatch.delenv("HANDOFF_SANDBOX_WRITE")
    assert judged(store, ref, claude("Write", "/tmp/elsewhere.txt", worktree)) == (
        True,
        "",
    )  # unsandboxed: not the project's

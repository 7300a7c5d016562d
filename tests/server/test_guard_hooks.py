"""``handoff-mcp guard`` as the agent CLIs run it on every event: real processes, real git, the
event shapes Claude Code and Codex send. It fails closed, judges every path a tool names, anchors
the TASK to its published bytes, tells the agent what a shell command changed outside the scope,
and keeps an executor from ending without its REPORT."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.requests import implementation, report_of
from handoff_core.contract.ids import Ref
from handoff_core.contract.scope import Scope
from handoff_core.services.evidence.endings import ended_without_report
from handoff_core.services.writing.store import Store
from tests.support.gitrepo import ENV, add_worktree, git, make_repo, write

pytestmark = pytest.mark.slow  # every test here starts handoff-mcp guard or git as a process
SCRIPT = Path(sys.executable).parent / "handoff-mcp"


@pytest.fixture
def worktree(project: Path) -> Path:
    make_repo(project)
    return add_worktree(project, "task-a")


@pytest.fixture
def created(store: Store, worktree: Path) -> tuple[Ref, str]:
    scope = Scope(workspace="required", writable=("src/a1/**",), worktree=str(worktree), branch="task-a")
    stored = store.create_task(implementation(scope=scope))
    return stored.ref, stored.sha256


def guard(
    store: Store, ref: Ref, data: bytes | str, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    roots = ["--project-root", str(store.roots.project_root), "--state-root", str(store.roots.state_root)]
    stdin = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    return subprocess.run(
        [str(SCRIPT), "guard", "--ref", str(ref), *args, *roots],
        input=stdin,
        capture_output=True,
        timeout=60,
        check=False,
        env=env or ENV,
        cwd="/",
    )


def pre(tool: str, given: Mapping[str, object], cwd: Path | str) -> str:
    return json.dumps({"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": given, "cwd": str(cwd)})


def verdict(done: subprocess.CompletedProcess[bytes]) -> str:
    """allow, deny, or what else the CLI would read (exit 1 is a non-blocking error: the tool runs)."""
    if done.returncode == 2:
        return "deny"
    if done.returncode != 0:
        return f"exit {done.returncode}"
    if not done.stdout:
        return "allow"
    answer = json.loads(done.stdout)
    if answer.get("decision") == "block":
        return "deny"
    return "deny" if answer["hookSpecificOutput"]["permissionDecision"] == "deny" else "allow"


# -- A: the TASK anchored to its published bytes -------------------------------------------------------------


def test_a_widened_task_is_denied_everything_when_the_hook_is_pinned(
    store: Store, created: tuple[Ref, str], worktree: Path
) -> None:
    ref, sha = created
    inside = pre("Write", {"file_path": str(worktree / "src/a1/x.py")}, worktree)
    assert verdict(guard(store, ref, inside, "--task-sha256", sha)) == "allow"
    task = store.roots.task_dir(ref) / "TASK.md"
    task.write_text(task.read_text().replace('writable: ["src/a1/**"]', 'writable: ["**"]'))
    harmless = pre("Bash", {"command": "echo hi"}, worktree)
    for event in (inside, pre("Write", {"file_path": str(worktree / "src/b/x.py")}, worktree), harmless):
        done = guard(store, ref, event, "--task-sha256", sha)
        assert verdict(done) == "deny"
        assert b"not the ones published" in done.stdout


def test_an_unpinned_hook_still_judges_and_says_it_is_unanchored(
    store: Store, created: tuple[Ref, str], worktree: Path
) -> None:
    ref, _ = created
    done = guard(store, ref, pre("Write", {"file_path": str(worktree / "src/b/x.py")}, worktree))
    assert verdict(done) == "deny"
    assert b"unanchored" in done.stdout
    assert b"unanchored" in done.stderr


def test_the_pre_commit_hook_refuses_every_commit_once_the_task_changed(
    project: Path, store: Store, created: tuple[Ref, str], worktree: Path
) -> None:
    ref, _ = created
    roots = ["--project-root", str(project), "--state-root", str(store.roots.state_root)]
    installed = subprocess.run(
        [str(SCRIPT), "guard", "--install-git-hook", "--ref", str(ref), *roots],
        cwd=worktree, env=ENV, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stderr
    task = store.roots.task_dir(ref) / "TASK.md"
    task.write_text(task.read_text().replace('writable: ["src/a1/**"]', 'writable: ["**"]'))
    write(worktree, "src/a1/new.py")
    git(worktree, "add", "-A")
    refused = git(worktree, "commit", "-q", "-m", "work", check=False)
    assert refused.returncode != 0
    assert "not the ones published" in refused.stderr


# -- B: fails closed, sees every path ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "event",
    [
        '{"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": {"file_path": "/x\\u0000"}, "cwd": "/"}',
        '{"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": {"file_path": "/x\\ud800"}, "cwd": "/"}',
        '{"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": {"file_path": "/x"}, "cwd": "/",'
        ' "extra": ' + "[" * 100_000 + "]" * 100_000 + "}",
        b"\xff\xfe not utf-8",
    ],
    ids=["nul", "lone-surrogate", "deeply-nested", "not-utf8"],
)
def test_no_input_allows_by_crashing(store: Store, created: tuple[Ref, str], event: str | bytes) -> None:
    ref, sha = created
    for pin in ([], ["--task-sha256", sha]):
        done = guard(store, ref, event, *pin)
        assert verdict(done) == "deny", done.stderr[-300:]


def test_an_indented_codex_header_is_judged(store: Store, created: tuple[Ref, str], worktree: Path) -> None:
    ref, _ = created
    patch = "*** Begin Patch\n*** Add File: src/a1/x.py\n+x\n  *** Add File: src/b/evil.py\n+y\n*** End Patch\n"
    assert verdict(guard(store, ref, pre("apply_patch", {"command": patch}, worktree))) == "deny"


@pytest.mark.parametrize("sep", ["\x0b", "\x1c", "\u2028"])
def test_a_codex_path_holding_a_python_line_break_is_one_path(
    store: Store, created: tuple[Ref, str], worktree: Path, sep: str
) -> None:
    ref, _ = created
    # One path to Codex, which writes <worktree>/b/evil.py; two lines to Python's splitlines().
    patch = f"*** Begin Patch\n*** Add File: src/a1/ok{sep}/../../../b/evil.py\n+x\n*** End Patch\n"
    assert verdict(guard(store, ref, pre("apply_patch", {"input": patch}, worktree))) == "deny"


def test_every_path_field_of_a_tool_is_judged(store: Store, created: tuple[Ref, str], worktree: Path) -> None:
    ref, _ = created
    both = {"file_path": str(worktree / "src/a1/x.ipynb"), "notebook_path": str(worktree / "src/b/x.ipynb")}
    assert verdict(guard(store, ref, pre("NotebookEdit", both, worktree))) == "deny"
    unknown = pre("SomeNewWriter", {"target_path": str(worktree / "src/b/x.py")}, worktree)
    assert verdict(guard(store, ref, unknown)) == "deny"
    outside = {"file_path": str(worktree / "src/b/x.py")}
    nameless = json.dumps({"hook_event_name": "PreToolUse", "tool_input": outside, "cwd": str(worktree)})
    assert verdict(guard(store, ref, nameless)) == "deny"


def test_a_worktree_with_a_relative_gitdir_is_another_tree(
    project: Path, store: Store, created: tuple[Ref, str], worktree: Path
) -> None:
    ref, _ = created
    other = add_worktree(project, "task-b")
    marker = other / ".git"
    target = marker.read_text().removeprefix("gitdir:").strip()
    marker.write_text(f"gitdir: {os.path.relpath(target, other)}\n")
    assert verdict(guard(store, ref, pre("Write", {"file_path": str(other / "src/a1/x.py")}, worktree))) == "deny"


def test_a_nested_repository_inside_another_worktree_belongs_to_it(
    project: Path, store: Store, created: tuple[Ref, str], worktree: Path
) -> None:
    ref, _ = created
    other = add_worktree(project, "task-b")
    nested = other / "vendor" / "lib"
    nested.mkdir(parents=True)
    git(nested, "init", "-q")
    assert verdict(guard(store, ref, pre("Write", {"file_path": str(nested / "x.py")}, worktree))) == "deny"


_EVENT_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=10), inner, max_size=3),
    max_leaves=10,
)


@st.composite
def hostile_events(draw: st.DrawFn, worktree: Path) -> bytes:
    kind = draw(st.sampled_from(["bytes", "json", "shaped"]))
    if kind == "bytes":
        return draw(st.binary(max_size=200))
    if kind == "json":
        return json.dumps(draw(_EVENT_VALUES)).encode()
    tool = draw(st.sampled_from(["Write", "Edit", "MultiEdit", "NotebookEdit", "apply_patch", "Bash", "Other", None]))
    name = draw(st.text(st.characters(codec="utf-8"), max_size=12))
    given: dict[str, object] = {
        draw(st.sampled_from(["file_path", "notebook_path", "command", "path"])): f"src/b/{name}"
    }
    given |= draw(st.dictionaries(st.text(max_size=8), _EVENT_VALUES, max_size=2))
    event = {"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": given, "cwd": str(worktree)}
    return json.dumps(event).encode()


@settings(max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_random_input_never_exits_1_nor_allows_a_path_outside_the_scope(
    store: Store, created: tuple[Ref, str], worktree: Path, data: st.DataObject
) -> None:
    ref, sha = created
    event = data.draw(hostile_events(worktree))
    done = guard(store, ref, event, "--task-sha256", sha)
    answer = verdict(done)
    assert answer in ("allow", "deny"), done.stderr[-300:]
    outside = f"{worktree}/src/b/".encode()
    if answer == "allow":  # only an event that names nothing of ours may pass
        assert b"src/b/" not in event or outside not in event.replace(b"\\/", b"/")


# -- C: shell commands, what they changed, and the end of a session -------------------------------------------------


def bash(command: str, cwd: Path) -> str:
    return pre("Bash", {"command": command, "description": "d"}, cwd)


def test_git_actions_the_task_does_not_authorise_are_denied(
    store: Store, created: tuple[Ref, str], worktree: Path
) -> None:
    ref, sha = created
    for command in ("git push origin HEAD", "git -C . merge main", "git rebase main", "git reset --hard HEAD~1",
                    "git checkout main", "git switch -c other", "git stash", "bash -c 'git push'",
                    "git add src/b/other.py"):  # fmt: skip
        done = guard(store, ref, bash(command, worktree), "--task-sha256", sha)
        assert verdict(done) == "deny", command
    for command in ("git commit -m work", "git add src/a1/core.py", "git status", "git checkout -- src/a1/core.py"):
        assert verdict(guard(store, ref, bash(command, worktree), "--task-sha256", sha)) == "allow", command
    write(worktree, "src/a1/mine.py")
    assert verdict(guard(store, ref, bash("git add -A && git commit -m w", worktree), "--task-sha256", sha)) == "allow"
    write(worktree, "src/b/stray.py")
    stray = guard(store, ref, bash("git add -A", worktree), "--task-sha256", sha)
    assert verdict(stray) == "deny"
    assert b"src/b/stray.py" in stray.stdout


def post(command: str, cwd: Path) -> str:
    return json.dumps(
        {
            "hook_event_name": "PostToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": command},
            "tool_response": {"stdout": ""},
            "cwd": str(cwd),
            "session_id": "s",
        }
    )


def shell(store: Store, ref: Ref, sha: str, command: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    """The post-tool hook's answer to ``command``, its start marked by the pre-tool hook first (as both CLIs
    run them)."""
    bash = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": command}}
    started = guard(store, ref, json.dumps(bash | {"cwd": str(cwd), "session_id": "s"}), "--task-sha256", sha)
    assert verdict(started) == "allow", started.stdout
    return guard(store, ref, post(command, cwd), "--event", "post-tool", "--task-sha256", sha)


def test_after_a_shell_command_the_agent_is_told_what_to_put_back(
    store: Store, created: tuple[Ref, str], worktree: Path
) -> None:
    ref, sha = created
    clean = shell(store, ref, sha, "true", worktree)
    assert (clean.returncode, clean.stdout) == (0, b"")
    write(worktree, "src/a1/fine.py")
    write(worktree, "src/b/new.py")
    write(worktree, "README.md", "changed\n")
    done = shell(store, ref, sha, "make", worktree)
    answer = json.loads(done.stdout)
    assert answer["decision"] == "block"
    assert "rm -- src/b/new.py" in answer["reason"]
    assert "git restore --staged --worktree --source=HEAD -- README.md" in answer["reason"]
    assert "fine.py" not in answer["reason"]


def test_paths_dirty_at_dispatch_are_not_blamed_on_the_executor(project: Path, store: Store) -> None:
    make_repo(project)
    write(project, "notes.txt", "the lead's\n")
    stored = store.create_task(implementation(scope=Scope(workspace="current", writable=("src/a1/**",))))
    quiet = shell(store, stored.ref, stored.sha256, "true", project)
    assert (quiet.returncode, quiet.stdout) == (0, b"")
    write(project, "src/b/other.py", "mine\n")
    done = shell(store, stored.ref, stored.sha256, "x", project)
    reason = json.loads(done.stdout)["reason"]
    assert "src/b/other.py" in reason
    assert "notes.txt" not in reason


def stop(session: str, active: bool = False) -> str:
    event = {"hook_event_name": "Stop", "session_id": session, "cwd": "/", "stop_hook_active": active}
    return json.dumps(event | {"transcript_path": None, "last_assistant_message": "done", "turn_id": "t"})


def test_an_executor_cannot_end_without_its_report_but_is_let_go_after_three_blocks(
    store: Store, created: tuple[Ref, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ref, sha = created
    env = ENV | {"HANDOFF_CACHE_DIR": str(tmp_path / "cache")}
    monkeypatch.setenv("HANDOFF_CACHE_DIR", str(tmp_path / "cache"))
    assert ended_without_report(str(store.roots.state_root), str(ref)) is None
    answers = [guard(store, ref, stop("s1"), "--event", "stop", "--task-sha256", sha, env=env) for _ in range(4)]
    blocked = [json.loads(a.stdout) for a in answers[:3]]
    assert all(b["decision"] == "block" and "write_report" in b["reason"] for b in blocked)
    assert all(word in blocked[0]["reason"] for word in ("completed", "blocked", "failed", "cancelled"))
    assert (answers[3].returncode, answers[3].stdout) == (0, b"")
    ending = ended_without_report(str(store.roots.state_root), str(ref))
    assert ending is not None
    assert ending.session_id == "s1"  # what the Lead's status can show: this session ended without a REPORT
    again = guard(store, ref, stop("s2"), "--event", "stop", "--task-sha256", sha, env=env)
    assert json.loads(again.stdout)["decision"] == "block"  # another session counts from zero
    focused = "Built A1. Kept the API. Stopped after tests. Next: review."
    fields = {"status": "failed", "focused": focused, "artifacts": "none", "verification": "none"}
    store.write_report(report_of(ref, **fields), ref.change)
    done = guard(store, ref, stop("s3"), "--event", "stop", "--task-sha256", sha, env=env)
    assert (done.returncode, done.stdout) == (0, b"")

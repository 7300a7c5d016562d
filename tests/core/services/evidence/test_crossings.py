"""A shell write from one task into another task's worktree, or into the main tree, is named at once
by the writer's post-tool hook and blamed on the writer by the audits, not on the tree's own task:
real hook processes around a real shell, real worktrees."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench.requests import implementation
from handoff_core.contract.ids import Ref
from handoff_core.contract.scope import Scope
from handoff_core.files.task_dir import StoredFile as StoredTask
from handoff_core.services.evidence.audit import audit_task
from handoff_core.services.writing.store import Store
from server.client_config import hook_entry
from tests.support.gitrepo import ENV, add_worktree, commit_all, make_repo, report, write

pytestmark = pytest.mark.slow  # the hooks run as their own processes


def task(store: Store, tree: Path, branch: str, glob: str) -> StoredTask:
    scope = Scope(workspace="required", writable=(glob,), worktree=str(tree), branch=branch)
    return store.create_task(implementation(f"implement-{branch}", scope=scope, writer_limit=3))


def shell(store: Store, stored: StoredTask, cwd: Path, line: str) -> str:
    """``line`` run by a shell in ``cwd`` between the task's pre-tool and post-tool hooks, as a CLI runs
    its shell tool; the post-tool hook's reason, or "" when it allowed."""
    roots = ["--project-root", str(store.roots.project_root), "--state-root", str(store.roots.state_root)]
    flags = [*hook_entry(), "--ref", str(stored.ref), "--task-sha256", stored.sha256, *roots]
    event = {
        "tool_name": "Bash",
        "tool_input": {"command": line},
        "cwd": str(cwd),
        "session_id": "s",
        "tool_use_id": "t",
    }
    pre = json.dumps(event | {"hook_event_name": "PreToolUse"}).encode()
    allowed = subprocess.run([*flags, "--event", "pre-tool"], input=pre, capture_output=True, timeout=60, check=False)
    assert (allowed.returncode, allowed.stdout) == (0, b""), allowed
    ran = subprocess.run(["bash", "-c", line], cwd=cwd, env=ENV, capture_output=True, timeout=60, check=False)
    assert ran.returncode == 0, ran.stderr
    post = json.dumps(event | {"hook_event_name": "PostToolUse"}).encode()
    done = subprocess.run([*flags, "--event", "post-tool"], input=post, capture_output=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["reason"]) if done.stdout else ""


def returned(store: Store, ref: Ref, checkpoint: str) -> None:
    store.write_report(report(ref.session, ref.task, checkpoint), ref.change)


@pytest.fixture
def two(store: Store, project: Path) -> tuple[Path, Path, StoredTask, StoredTask]:
    make_repo(project)
    tree_a, tree_b = add_worktree(project, "task-a"), add_worktree(project, "task-b")
    return tree_a, tree_b, task(store, tree_a, "task-a", "src/a1/**"), task(store, tree_b, "task-b", "src/b/**")


def test_a_write_into_another_tasks_worktree_is_named_at_once_and_blamed_on_the_writer_not_the_tree(
    store: Store, two: tuple[Path, Path, StoredTask, StoredTask]
) -> None:
    tree_a, tree_b, a, b = two
    reason = shell(store, a, tree_a, f"echo mine > src/a1/new.py && echo stray > {tree_b}/src/b/other.py")
    assert f"{tree_b}/src/b/other.py: (cd {tree_b} && git restore" in reason
    assert "paths in other trees changed while the last command ran" in reason
    returned(store, a.ref, commit_all(tree_a))
    write(tree_b, "src/b/own.py")
    git_b = subprocess.run(["git", "add", "src/b/own.py"], cwd=tree_b, env=ENV, timeout=60, check=True)
    assert git_b.returncode == 0
    subprocess.run(["git", "commit", "-qm", "b"], cwd=tree_b, env=ENV, timeout=60, check=True)
    returned(store, b.ref, subprocess.run(["git", "rev-parse", "HEAD"], cwd=tree_b, env=ENV, capture_output=True,
                                          text=True, check=True).stdout.strip())  # fmt: skip
    audit_a = audit_task(store.queries, a.ref)
    assert audit_a.verdict == "failed"
    assert [v.path for v in audit_a.violations] == [f"{tree_b}/src/b/other.py"]
    assert "a command of this task that names that tree" in audit_a.violations[0].why
    audit_b = audit_task(store.queries, b.ref)
    assert audit_b.verdict == "unknown", audit_b  # not blamed for a path its session never wrote: not passed either
    assert audit_b.violations == ()
    assert audit_b.not_judged == (f"src/b/other.py: changed by a command of {a.ref} (its post-tool's record), "
                                  "and not written since: not this task's",)  # fmt: skip
    assert str(a.ref) in audit_b.reason


def test_a_write_into_the_main_tree_is_named_at_once_and_fails_the_writers_audit(
    store: Store, project: Path, two: tuple[Path, Path, StoredTask, StoredTask]
) -> None:
    tree_a, _, a, _ = two
    reason = shell(store, a, tree_a, f"cd {project} && echo stray >> README.md")
    assert f"{project}/README.md" in reason
    write(tree_a, "src/a1/new.py")
    returned(store, a.ref, commit_all(tree_a))
    audit = audit_task(store.queries, a.ref)
    assert audit.verdict == "failed"
    assert [v.path for v in audit.violations] == [f"{project}/README.md"]
    assert "the main tree" in audit.violations[0].why


def test_a_write_whose_command_names_no_other_tree_leaves_the_writers_audit_unknown(
    store: Store, two: tuple[Path, Path, StoredTask, StoredTask]
) -> None:
    tree_a, tree_b, a, _ = two
    hidden = str(tree_b / "src/b/other.py").encode().hex()
    line = f"{sys.executable} -c \"open(bytes.fromhex('{hidden}').decode(), 'w').write('x')\""
    reason = shell(store, a, tree_a, line)
    assert f"{tree_b}/src/b/other.py" in reason
    write(tree_a, "src/a1/new.py")
    returned(store, a.ref, commit_all(tree_a))
    audit = audit_task(store.queries, a.ref)
    assert (audit.verdict, audit.violations) == ("unknown", ())
    assert audit.not_judged[0].startswith(f"{tree_b}/src/b/other.py: changed in another task's worktree")


def test_a_command_that_writes_only_its_own_tree_is_not_told_anything(
    store: Store, two: tuple[Path, Path, StoredTask, StoredTask]
) -> None:
    tree_a, tree_b, a, _ = two
    write(tree_b, "src/b/before.py")  # another task's work, from before the command: not this command's
    assert shell(store, a, tree_a, "echo mine > src/a1/new.py") == ""


def test_a_current_tasks_audit_sets_aside_what_another_tasks_command_wrote_in_the_main_tree(
    store: Store, project: Path
) -> None:
    make_repo(project)
    current = store.create_task(implementation("main-work", writer_limit=3))  # the main tree is its tree
    tree_a = add_worktree(project, "task-a")
    a = task(store, tree_a, "task-a", "src/b/**")
    reason = shell(store, a, tree_a, f"echo stray > {project}/src/a1/core.py")  # in the current task's scope
    assert f"{project}/src/a1/core.py" in reason
    store.write_report(report(current.ref.session, current.ref.task, None), current.ref.change)
    audit = audit_task(store.queries, current.ref)
    assert (audit.verdict, audit.violations) == ("unknown", ()), audit
    assert audit.not_judged[0].startswith(f"src/a1/core.py: changed by a command of {a.ref}")

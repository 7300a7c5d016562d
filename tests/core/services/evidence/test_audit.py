"""audit_task: a task's actual change, base to checkpoint plus what is left in the worktree, judged
against its frozen TASK; real repositories and real ``git worktree add``."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.requests import implementation, review
from handoff_core.contract.ids import Ref
from handoff_core.contract.scope import Scope
from handoff_core.errors import WorkspaceRefused
from handoff_core.services.evidence.audit import audit_task
from handoff_core.services.writing.store import Store
from tests.support.gitrepo import add_worktree, commit_all, git, make_repo, report, write


@pytest.fixture
def worktree(project: Path) -> Path:
    make_repo(project)
    return add_worktree(project, "task-a")


def dispatch(store: Store, tree: Path, branch: str = "task-a", writable: tuple[str, ...] = ("src/a1/**",)) -> Ref:
    scope = Scope(workspace="required", writable=writable, worktree=str(tree), branch=branch)
    return store.create_task(implementation(scope=scope)).ref


def returned(store: Store, ref: Ref, checkpoint: str | None) -> None:
    store.write_report(report(ref.session, ref.task, checkpoint), ref.change)


def test_the_task_records_worktree_branch_and_the_branch_tip_as_base(store: Store, worktree: Path) -> None:
    tip = git(worktree, "rev-parse", "task-a").stdout.strip()
    ref = dispatch(store, worktree)
    task, stored = store.queries.read_task(ref)
    assert (task.scope.worktree, task.scope.branch, task.scope.base) == (str(worktree.resolve()), "task-a", tip)
    assert f"- Worktree: `{worktree.resolve()}` on branch `task-a`" in stored.text
    assert f'base: "{tip}"' in stored.text


@pytest.mark.parametrize("where", ["main tree", "not a worktree", "wrong branch"])
def test_a_path_that_is_not_a_linked_worktree_on_that_branch_is_refused_at_dispatch(
    store: Store, worktree: Path, project: Path, tmp_path: Path, where: str
) -> None:
    tree, branch = {
        "main tree": (project, "main"),
        "not a worktree": (tmp_path / "elsewhere", "task-a"),
        "wrong branch": (worktree, "main"),
    }[where]
    tree.mkdir(exist_ok=True)
    with pytest.raises(WorkspaceRefused):
        dispatch(store, tree, branch)
    assert not list(store.roots.state_root.rglob("TASK.md"))


def test_a_commit_inside_the_scope_passes(store: Store, worktree: Path) -> None:
    ref = dispatch(store, worktree)
    write(worktree, "src/a1/new.py")
    returned(store, ref, commit_all(worktree))
    audit = audit_task(store.queries, ref)
    assert audit.verdict == "passed", audit
    assert audit.changed == ("A src/a1/new.py",)
    assert audit.violations == ()


def test_a_commit_touching_a_path_outside_fails_naming_it(store: Store, worktree: Path) -> None:
    ref = dispatch(store, worktree)
    write(worktree, "src/a1/core.py", "changed\n")
    write(worktree, "src/b/other.py", "changed\n")
    (worktree / "README.md").unlink()
    returned(store, ref, commit_all(worktree))
    audit = audit_task(store.queries, ref)
    assert audit.verdict == "failed"
    assert sorted(v.path for v in audit.violations) == ["README.md", "src/b/other.py"]
    assert any(v.why.startswith("deleted") for v in audit.violations if v.path == "README.md")


def test_a_dirty_worktree_fails_even_inside_the_scope(store: Store, worktree: Path) -> None:
    ref = dispatch(store, worktree)
    write(worktree, "src/a1/new.py")
    returned(store, ref, commit_all(worktree))
    write(worktree, "src/a1/left.py")  # untracked, after the checkpoint
    audit = audit_task(store.queries, ref)
    assert audit.verdict == "failed"
    assert audit.dirty == ("? src/a1/left.py",)
    assert [v.path for v in audit.violations] == ["src/a1/left.py"]


def test_a_rename_out_of_another_tasks_glob_fails_on_its_deleted_side(store: Store, worktree: Path) -> None:
    ref = dispatch(store, worktree)
    git(worktree, "mv", "src/b/other.py", "src/a1/other.py")
    returned(store, ref, commit_all(worktree))
    audit = audit_task(store.queries, ref)
    assert audit.verdict == "failed"
    assert [(v.path, v.why.split(",")[0]) for v in audit.violations] == [
        ("src/b/other.py", "renamed away (its deleted side)")
    ]


def test_a_mode_change_counts_as_a_change(store: Store, worktree: Path) -> None:
    ref = dispatch(store, worktree)
    (worktree / "src/b/other.py").chmod(0o755)
    returned(store, ref, commit_all(worktree))
    audit = audit_task(store.queries, ref)
    assert audit.verdict == "failed"
    assert audit.changed == ("M src/b/other.py",)


def test_a_checkpoint_that_does_not_descend_from_the_base_is_unknown(
    store: Store, worktree: Path, project: Path
) -> None:
    ref = dispatch(store, worktree)
    tree = git(project, "rev-parse", "HEAD^{tree}").stdout.strip()
    orphan = git(project, "commit-tree", tree, "-m", "history of its own").stdout.strip()
    returned(store, ref, orphan)
    audit = audit_task(store.queries, ref)
    assert audit.verdict == "unknown"
    assert "does not descend" in audit.reason


def test_a_report_without_a_checkpoint_or_a_checkpoint_not_in_the_repository_is_unknown(
    store: Store, worktree: Path
) -> None:
    ref = dispatch(store, worktree)
    assert audit_task(store.queries, ref).verdict == "unknown"  # no REPORT yet
    returned(store, ref, "0" * 40)
    audit = audit_task(store.queries, ref)
    assert audit.verdict == "unknown"
    assert "not a commit" in audit.reason


def test_a_current_task_records_head_and_dirty_paths_and_its_audit_never_judges_those(
    store: Store, project: Path
) -> None:
    make_repo(project)
    write(project, "src/b/other.py", "someone else's edit\n")
    head = git(project, "rev-parse", "HEAD").stdout.strip()
    # It commits: its TASK authorises that (outside the sandbox: the main tree's index is git's).
    scope = Scope(workspace="current", writable=("src/a1/**",), actions=("commit",), sandbox="off")
    ref = store.create_task(implementation(scope=scope)).ref
    task, _ = store.queries.read_task(ref)
    assert (task.scope.base, task.scope.dirty) == (head, ("src/b/other.py",))
    write(project, "src/a1/core.py", "mine\n")
    returned(store, ref, commit_all(project))
    audit = audit_task(store.queries, ref)
    assert (audit.verdict, audit.changed, audit.violations) == ("unknown", ("M src/a1/core.py",), ())
    assert [line.split(":")[0] for line in audit.not_judged] == ["src/b/other.py"]  # the rest: test_since_dispatch


def test_a_read_only_task_with_a_worktree_fails_on_any_change_outside_its_artifacts(
    store: Store, worktree: Path
) -> None:
    scope = Scope(
        workspace=None,
        writable=(),
        read_only=("src/**",),
        shared=(),
        artifacts=("reports/**",),
        worktree=str(worktree),
        branch="task-a",
    )
    ref = store.create_task(review(scope=scope)).ref
    write(worktree, "reports/findings.txt")
    write(worktree, "src/a1/core.py", "a reviewer's edit\n")
    returned(store, ref, commit_all(worktree))
    audit = audit_task(store.queries, ref)
    assert audit.verdict == "failed"
    assert [v.path for v in audit.violations] == ["src/a1/core.py"]


def test_the_handoff_tree_is_never_in_scope(store: Store, worktree: Path) -> None:
    ref = dispatch(store, worktree, writable=("**",))
    write(worktree, "speculo/.speculo/specdev/changes/x/REPORT.md")
    git(worktree, "add", "-f", "speculo")
    returned(store, ref, commit_all(worktree))
    audit = audit_task(store.queries, ref)
    assert audit.verdict == "failed"
    assert "handoff tree" in audit.violations[0].why


def test_a_commit_after_the_checkpoint_fails_the_audit(store: Store, worktree: Path) -> None:
    ref = dispatch(store, worktree)
    write(worktree, "src/a1/new.py")
    returned(store, ref, commit_all(worktree))
    write(worktree, "src/b/other.py", "after the report\n")
    commit_all(worktree)
    audit = audit_task(store.queries, ref)
    assert audit.verdict == "failed"
    assert [v.path for v in audit.violations] == ["HEAD"]


def test_a_hand_edited_checkpoint_never_becomes_a_git_option(store: Store, worktree: Path, tmp_path: Path) -> None:
    ref = dispatch(store, worktree)
    returned(store, ref, None)
    path = store.roots.task_dir(ref) / "REPORT.md"
    text = path.read_text()
    path.chmod(0o644)
    written = tmp_path / "written-by-git"
    path.write_text(text.replace("Status: completed", f"Status: completed\nSource-Checkpoint: --output={written}"))
    audit = audit_task(store.queries, ref)
    assert audit.verdict == "unknown"
    assert not written.exists()


def test_a_replace_ref_never_stands_in_for_the_checkpoint_the_audit_judges(store: Store, worktree: Path) -> None:
    ref = dispatch(store, worktree)
    base = git(worktree, "rev-parse", "HEAD").stdout.strip()
    write(worktree, "src/a1/decoy.py")
    decoy = commit_all(worktree)  # inside the scope, with the base as its parent
    git(worktree, "reset", "-q", "--hard", base)
    write(worktree, "src/b/evil.py")
    real = commit_all(worktree)
    git(worktree, "replace", real, decoy)  # a git honouring refs/replace reads the decoy for the real commit
    git(worktree, "reset", "-q", "--hard", "HEAD")  # the tree left as the decoy: clean to such a git
    returned(store, ref, real)
    audit = audit_task(store.queries, ref)
    assert audit.verdict == "failed"
    assert "A src/b/evil.py" in audit.changed
    assert "src/b/evil.py" in {v.path for v in audit.violations}

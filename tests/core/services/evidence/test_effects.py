"""audit_task judges what a task did with git by its effect, whatever command did it: commits on its
branch or on HEAD, a moved HEAD, what reached a git remote, and (as evidence) git's reflogs; real
repositories, worktrees, bare remotes and shells."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bench.requests import implementation
from handoff_core.contract.ids import Ref
from handoff_core.contract.scope import Scope
from handoff_core.layout import AuthorisedAction
from handoff_core.services.evidence.audit import Audit, audit_task
from handoff_core.services.writing.store import Store
from tests.support.gitrepo import ENV, add_worktree, commit_all, git, make_repo, report, write

COMMIT_FORMS = {
    "braces": "{ git commit -q -m work; }",
    "nice": "nice git commit -q -m work",
    "alias": "git -c alias.c=commit c -q -m work",
    "commit-tree": "git update-ref HEAD $(git commit-tree $(git write-tree) -p HEAD -m work)",
    "python": f"{sys.executable} -c \"import subprocess; subprocess.run(['git', 'commit', '-q', '-m', 'work'])\"",
}


def sh(cwd: Path, line: str) -> None:
    done = subprocess.run(
        ["bash", "-c", line], cwd=cwd, env=ENV, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr


def returned(store: Store, ref: Ref, checkpoint: str | None) -> None:
    store.write_report(report(ref.session, ref.task, checkpoint), ref.change)


def head(tree: Path) -> str:
    return git(tree, "rev-parse", "HEAD").stdout.strip()


def worktree_task(store: Store, tree: Path, actions: tuple[AuthorisedAction, ...] = ()) -> Ref:
    scope = Scope(workspace="required", writable=("src/a1/**",), worktree=str(tree), branch="task-a", actions=actions)
    return store.create_task(implementation(scope=scope)).ref


def whys(audit: Audit) -> str:
    return " | ".join(f"{v.path}: {v.why}" for v in audit.violations)


@pytest.mark.parametrize("form", sorted(COMMIT_FORMS))
def test_a_commit_in_any_shell_form_by_a_current_task_that_authorises_none_fails_its_audit(
    store: Store, project: Path, form: str
) -> None:
    make_repo(project)
    ref = store.create_task(implementation()).ref  # a current task: it authorises no git action
    write(project, "src/a1/core.py", "mine\n")
    git(project, "add", "src/a1/core.py")
    sh(project, COMMIT_FORMS[form])
    returned(store, ref, None)
    audit = audit_task(store.queries, ref)
    assert audit.verdict == "failed", whys(audit)
    assert any(v.path == "HEAD" and "a commit, which the TASK does not authorise" in v.why for v in audit.violations)


def test_a_worktree_task_whose_task_lists_actions_without_commit_fails_on_its_commit(
    store: Store, project: Path
) -> None:
    make_repo(project)
    tree = add_worktree(project, "task-a")
    ref = worktree_task(store, tree, ("stage-outside-scope",))
    write(tree, "src/a1/new.py")
    returned(store, ref, commit_all(tree))
    audit = audit_task(store.queries, ref)
    assert audit.verdict == "failed"
    assert [(v.path, "a commit, which" in v.why) for v in audit.violations] == [("refs/heads/task-a", True)]


@pytest.mark.parametrize("move", ["git switch -q -c other", "git symbolic-ref HEAD refs/heads/other"])
def test_a_worktree_whose_head_left_its_branch_fails_even_at_the_checkpoint(
    store: Store, project: Path, move: str
) -> None:
    make_repo(project)
    tree = add_worktree(project, "task-a")
    ref = worktree_task(store, tree)
    write(tree, "src/a1/new.py")
    checkpoint = commit_all(tree)
    git(tree, "branch", "other") if "symbolic-ref" in move else None
    sh(tree, move)
    assert head(tree) == checkpoint
    returned(store, ref, checkpoint)
    audit = audit_task(store.queries, ref)
    assert audit.verdict == "failed", whys(audit)
    assert "HEAD" in [v.path for v in audit.violations]
    assert "other checked out, not its branch task-a" in whys(audit)


@pytest.mark.parametrize(
    "push",
    [
        "git push -q origin task-a",
        "git push -q {bare} HEAD:refs/heads/main",
        "git send-pack {bare} HEAD:refs/heads/smuggled",
        "{{ git push -q origin HEAD:refs/tags/v9; }}",
    ],
)
def test_a_push_the_task_does_not_authorise_fails_its_audit_whatever_reached_the_remote(
    store: Store, project: Path, tmp_path: Path, push: str
) -> None:
    make_repo(project)
    bare = tmp_path / "shared.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    git(project, "remote", "add", "origin", str(bare))
    git(project, "push", "-q", "origin", "main")
    tree = add_worktree(project, "task-a")
    ref = worktree_task(store, tree)  # commit in its worktree, and nothing else
    write(tree, "src/a1/new.py")
    checkpoint = commit_all(tree)
    returned(store, ref, checkpoint)
    assert audit_task(store.queries, ref).verdict == "passed"  # nothing pushed yet
    sh(tree, push.format(bare=bare))
    audit = audit_task(store.queries, ref)
    assert audit.verdict == "failed", whys(audit)
    assert [v.path for v in audit.violations] == ["remote origin"]
    assert "a push, which the TASK does not authorise" in audit.violations[0].why


def test_a_push_is_not_blamed_once_the_leads_own_branch_holds_the_commits(
    store: Store, project: Path, tmp_path: Path
) -> None:
    make_repo(project)
    bare = tmp_path / "shared.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    git(project, "remote", "add", "origin", str(bare))
    tree = add_worktree(project, "task-a")
    ref = worktree_task(store, tree)
    write(tree, "src/a1/new.py")
    returned(store, ref, commit_all(tree))
    git(project, "merge", "-q", "--ff-only", "task-a")  # the Lead takes the work, then pushes its main
    git(project, "push", "-q", "origin", "main")
    assert audit_task(store.queries, ref).verdict == "passed"


def test_a_remote_that_cannot_be_asked_leaves_the_audit_short_of_passed(store: Store, project: Path) -> None:
    make_repo(project)
    git(project, "remote", "add", "origin", str(project.parent / "gone.git"))
    tree = add_worktree(project, "task-a")
    ref = worktree_task(store, tree)
    write(tree, "src/a1/new.py")
    returned(store, ref, commit_all(tree))
    audit = audit_task(store.queries, ref)
    assert audit.verdict == "unknown"
    assert "origin cannot be asked what reached it" in audit.reason


def test_a_commit_reset_away_in_a_current_task_is_read_from_gits_reflog(store: Store, project: Path) -> None:
    make_repo(project)
    base = head(project)
    ref = store.create_task(implementation()).ref
    write(project, "src/a1/core.py", "mine\n")
    sh(project, "git add -A && nice git commit -q -m hidden")
    sh(project, f"git update-ref HEAD {base}")  # the commit undone: HEAD is back at the base
    returned(store, ref, None)
    audit = audit_task(store.queries, ref)
    assert audit.verdict == "failed", whys(audit)
    assert [v.path for v in audit.violations] == ["reflog of HEAD", "reflog of HEAD"]
    commit, back = (v.why for v in audit.violations)
    assert "`commit: hidden`" in commit
    assert "no command" in back  # the update-ref back to the base: a reset made without naming one
    assert all("evidence" in v.why for v in audit.violations)


def test_a_merge_a_worktree_task_does_not_authorise_fails_and_a_branch_visited_and_left_is_read_from_the_reflog(
    store: Store, project: Path
) -> None:
    make_repo(project)
    tree = add_worktree(project, "task-a")
    ref = worktree_task(store, tree)
    sh(tree, "git switch -q -c side && echo s > src/a1/s.py && git add -A && git commit -q -m side")
    sh(tree, "git switch -q task-a && echo t > src/a1/t.py && git add -A && git commit -q -m t")
    sh(tree, "git merge -q --no-ff side -m merged")
    returned(store, ref, head(tree))
    audit = audit_task(store.queries, ref)
    assert audit.verdict == "failed"
    found = whys(audit)
    assert "1 merge commit(s) on the branch since dispatch" in found
    assert "`checkout: moving from task-a to side`" in found  # switched and back: only the reflog says so


def test_a_stash_made_on_the_tasks_work_is_read_from_gits_reflog(store: Store, project: Path) -> None:
    make_repo(project)
    tree = add_worktree(project, "task-a")
    ref = worktree_task(store, tree)
    write(tree, "src/a1/new.py")
    checkpoint = commit_all(tree)
    write(tree, "src/a1/new.py", "later\n")
    sh(tree, "command git stash -q")
    returned(store, ref, checkpoint)
    audit = audit_task(store.queries, ref)
    assert audit.verdict == "failed"
    assert [v.path for v in audit.violations] == ["refs/stash"]


def test_an_authorised_history_passes_with_nothing_read_against_it(store: Store, project: Path) -> None:
    make_repo(project)
    tree = add_worktree(project, "task-a")
    ref = worktree_task(store, tree, ("commit", "merge", "switch-branch"))
    sh(tree, "git switch -q -c side && echo s > src/a1/s.py && git add -A && git commit -q -m side")
    sh(tree, "git switch -q task-a && git merge -q --no-ff side -m merged")
    sh(tree, "git commit -q --amend -m again")
    returned(store, ref, head(tree))
    audit = audit_task(store.queries, ref)
    assert (audit.verdict, audit.violations) == ("passed", ()), whys(audit)


def test_a_push_to_a_remote_named_only_in_an_included_config_still_fails_the_audit(
    store: Store, project: Path, tmp_path: Path
) -> None:
    make_repo(project)
    bare = tmp_path / "shared.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    (project / "extra.cfg").write_text(f'[remote "origin"]\n\turl = {bare}\n')
    git(project, "config", "include.path", "../extra.cfg")
    tree = add_worktree(project, "task-a")
    ref = worktree_task(store, tree)
    write(tree, "src/a1/new.py")
    returned(store, ref, commit_all(tree))
    sh(tree, "git push -q origin task-a")
    audit = audit_task(store.queries, ref)
    assert [v.path for v in audit.violations] == ["remote origin"], whys(audit)


def test_a_packed_branch_is_read_at_the_checkpoint_and_past_it(store: Store, project: Path) -> None:
    """The branch's tip from ``packed-refs``: at the checkpoint it passes; moved past it, git is asked."""
    make_repo(project)
    tree = add_worktree(project, "task-a")
    ref = worktree_task(store, tree, actions=("commit", "switch-branch"))
    write(tree, "src/a1/new.py")
    checkpoint = commit_all(tree)
    returned(store, ref, checkpoint)
    git(project, "pack-refs", "--all")
    assert not (project / ".git/refs/heads/task-a").exists()
    assert audit_task(store.queries, ref).verdict == "passed"
    write(tree, "src/a1/later.py")
    later = commit_all(tree)
    git(tree, "checkout", "-q", "--detach", checkpoint)
    git(project, "pack-refs", "--all")
    audit = audit_task(store.queries, ref)
    assert f"the branch is at {later}, past the checkpoint" in whys(audit)

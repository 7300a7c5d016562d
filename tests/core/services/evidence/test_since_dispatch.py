"""audit_task of a ``current`` task: what changed in the shared project tree since dispatch (commits
since the recorded HEAD, what is uncommitted, less what was dirty then), judged against its scope,
with the verdict honest that the tree is shared; real repositories."""

from __future__ import annotations

from pathlib import Path

from bench.requests import implementation, review
from handoff_core.contract.ids import Ref
from handoff_core.contract.scope import Scope
from handoff_core.services.evidence.audit import audit_task
from handoff_core.services.writing.store import Store
from tests.support.gitrepo import commit_all, git, make_repo, report, write


def current(store: Store, *writable: str, commits: bool = False) -> Ref:
    """A current task; one that ``commits`` is authorised to (outside the sandbox: the main tree's index is git's)."""
    scope = Scope(workspace="current", writable=writable or ("src/a1/**",))
    if commits:
        scope = scope._replace(actions=("commit",), sandbox="off")
    return store.create_task(implementation(scope=scope)).ref


def returned(store: Store, ref: Ref, checkpoint: str | None = None) -> None:
    store.write_report(report(ref.session, ref.task, checkpoint), ref.change)


def test_a_current_task_whose_changes_since_dispatch_lie_in_its_scope_passes_saying_the_tree_is_shared(
    store: Store, project: Path
) -> None:
    make_repo(project)
    ref = current(store)
    write(project, "src/a1/core.py", "mine\n")
    write(project, "src/a1/new.py")
    returned(store, ref)  # no checkpoint: the tree is judged as it is
    audit = audit_task(store.queries, ref)
    assert (audit.verdict, audit.violations, audit.not_judged) == ("passed", (), ())
    assert audit.dirty == ("M src/a1/core.py", "? src/a1/new.py")
    assert "every path changed since dispatch (2) lies in the TASK's scope" in audit.reason
    assert "shared" in audit.reason


def test_a_path_outside_the_scope_changed_since_dispatch_is_a_finding_that_may_be_another_writers(
    store: Store, project: Path
) -> None:
    make_repo(project)
    ref = current(store, commits=True)
    write(project, "src/a1/core.py", "mine\n")
    write(project, "src/b/other.py", "someone's\n")
    checkpoint = commit_all(project)
    write(project, "README.md", "edited after the commit\n")
    returned(store, ref, checkpoint)
    audit = audit_task(store.queries, ref)
    assert audit.verdict == "failed"
    assert audit.checkpoint == checkpoint
    assert audit.changed == ("M src/a1/core.py", "M src/b/other.py")
    assert [(v.path, v.why.split(",")[0]) for v in audit.violations] == [
        ("src/b/other.py", "committed since dispatch"),
        ("README.md", "uncommitted"),
    ]
    assert "another writer" in audit.reason


def test_a_path_dirty_at_dispatch_is_not_judged_and_one_outside_the_scope_leaves_the_verdict_unknown(
    store: Store, project: Path
) -> None:
    make_repo(project)
    write(project, "src/b/other.py", "the Lead's own edit\n")
    write(project, "src/a1/core.py", "the Lead's edit in the scope\n")
    ref = current(store, commits=True)
    write(project, "src/a1/new.py")
    write(project, "src/b/other.py", "changed again: it cannot be seen\n")
    returned(store, ref, commit_all(project))
    audit = audit_task(store.queries, ref)
    assert (audit.verdict, audit.violations) == ("unknown", ())
    assert audit.changed == ("A src/a1/new.py",)
    assert [line.split(":")[0] for line in audit.not_judged] == ["src/b/other.py", "src/a1/core.py"]
    assert "dirty at dispatch" in audit.not_judged[0]
    assert audit.not_judged[1].endswith("(in the scope)")
    assert "(1) lies in the TASK's scope" in audit.reason


def test_a_path_dirty_at_dispatch_and_clean_now_changed_since(store: Store, project: Path) -> None:
    make_repo(project)
    write(project, "notes.txt", "the Lead's draft\n")
    ref = current(store)
    (project / "notes.txt").unlink()
    returned(store, ref)
    audit = audit_task(store.queries, ref)
    assert audit.verdict == "failed"
    assert [(v.path, v.why.split(",")[0]) for v in audit.violations] == [
        ("notes.txt", "dirty at dispatch and clean now")
    ]


def test_history_moved_under_the_task_is_unknown_with_the_reason(store: Store, project: Path) -> None:
    make_repo(project)
    ref = current(store)
    git(project, "checkout", "-q", "--orphan", "elsewhere")
    commit_all(project, "another history")
    returned(store, ref)
    audit = audit_task(store.queries, ref)
    assert audit.verdict == "unknown"
    assert "does not descend from the base" in audit.reason


def test_a_current_task_outside_git_is_unknown_saying_so(store: Store, project: Path) -> None:
    ref = current(store)
    write(project, "src/a1/core.py", "mine\n")
    returned(store, ref)
    audit = audit_task(store.queries, ref)
    assert audit.verdict == "unknown"
    assert "git" in audit.reason


def test_the_readme_walkthrough_in_a_repository_without_a_commit_says_what_it_judged_and_what_it_cannot(
    store: Store, project: Path
) -> None:
    git(project, "init", "-q", "-b", "main")  # no commit, no .gitignore: the handoff tree is untracked too
    write(project, ".mcp.json", '{"mcpServers": {}}\n')  # step 2, before the dispatch
    ref = current(store, "hello.txt")
    write(project, "hello.txt", "hello\n")
    returned(store, ref)
    audit = audit_task(store.queries, ref)
    assert (audit.verdict, audit.base, audit.dirty, audit.violations) == ("unknown", "", ("? hello.txt",), ())
    assert audit.not_judged == (
        ".mcp.json: dirty at dispatch, and changed now: a change since cannot be told from the one before",
    )
    assert "every path changed since dispatch that can be judged (1) lies in the TASK's scope" in audit.reason
    git(project, "add", "hello.txt", ".mcp.json")
    git(project, "commit", "-qm", "the first commit, after the dispatch")
    audit = audit_task(store.queries, ref)
    # The TASK authorises no commit, and the shared tree's HEAD moved since dispatch: a finding the Lead
    # checks before blaming the task (it may be the Lead's own, as here).
    assert (audit.verdict, audit.changed, [v.path for v in audit.violations]) == ("failed", ("A hello.txt",), ["HEAD"])
    assert "the Lead's commits after the REPORT count too" in audit.violations[0].why
    assert "check each before blaming this task" in audit.reason


def test_the_readme_walkthrough_in_a_committed_repository_passes(store: Store, project: Path) -> None:
    make_repo(project)
    write(project, ".mcp.json", '{"mcpServers": {}}\n')
    commit_all(project, "the Lead's configuration")
    ref = current(store, "hello.txt")
    write(project, "hello.txt", "hello\n")
    returned(store, ref)
    audit = audit_task(store.queries, ref)
    assert (audit.verdict, audit.dirty, audit.not_judged) == ("passed", ("? hello.txt",), ())


def test_a_reviews_artifacts_in_the_shared_tree_are_set_aside(store: Store, project: Path) -> None:
    make_repo(project)
    ref = current(store, commits=True)
    write(project, "src/a1/core.py", "mine\n")
    returned(store, ref, commit_all(project))
    scope = Scope(read_only=("src/**",), artifacts=("reports/**",))
    review_ref = store.create_task(review(scope=scope, review_of=ref)).ref
    write(project, "reports/findings.md")
    audit = audit_task(store.queries, ref)
    assert (audit.verdict, audit.not_judged) == (
        "passed",
        (f"reports/findings.md: an artifact of {review_ref}, which its audit judges",),
    )

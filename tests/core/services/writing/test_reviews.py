"""Reviews of a fixed checkpoint: review_of waits for the REPORT, pins its commit, and is audited for writes."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.requests import implementation, review
from handoff_core.contract.ids import Ref
from handoff_core.contract.scope import Scope
from handoff_core.errors import HandoffError
from handoff_core.services.evidence.audit import audit_task
from handoff_core.services.writing.store import Store
from tests.support.gitrepo import add_worktree, commit_all, git, make_repo, report, write


@pytest.fixture
def worktree(project: Path) -> Path:
    make_repo(project)
    return add_worktree(project, "task-a")


def implemented(store: Store, tree: Path) -> Ref:
    scope = Scope(workspace="required", writable=("src/a1/**",), worktree=str(tree), branch="task-a")
    return store.create_task(implementation(scope=scope)).ref


def reviewing(of: Ref, **overrides: object) -> dict[str, object]:
    scope = Scope(read_only=("src/**",), artifacts=("reports/**",))
    return {"scope": scope, "review_of": of, **overrides}


def code_of(store: Store, **request: object) -> str:
    with pytest.raises(HandoffError) as caught:
        store.create_task(review(**request))  # type: ignore[arg-type]
    return caught.value.code


def test_a_review_of_an_outstanding_task_is_refused_naming_it(store: Store, worktree: Path) -> None:
    ref = implemented(store, worktree)
    with pytest.raises(HandoffError) as caught:
        store.create_task(review(**reviewing(ref)))  # type: ignore[arg-type]
    assert caught.value.code == "state_refused"
    assert str(ref) in caught.value.message


def test_a_review_of_a_reported_task_records_its_checkpoint_and_cites_its_report(store: Store, worktree: Path) -> None:
    ref = implemented(store, worktree)
    write(worktree, "src/a1/core.py", "the candidate\n")
    checkpoint = commit_all(worktree)
    store.write_report(report(ref.session, ref.task, checkpoint), ref.change)
    write(worktree, "src/a1/later.py")
    commit_all(worktree, "the candidate moves on")  # the review still reads the reported commit
    created = store.create_task(review(**reviewing(ref)))  # type: ignore[arg-type]
    task, _ = store.queries.read_task(created.ref)
    assert (task.scope.base, task.scope.review_of) == (checkpoint, str(ref))
    assert (task.scope.worktree, task.scope.branch) == (str(worktree.resolve()), "task-a")
    assert f"Review of `{ref}` at commit `{checkpoint}`: read its REPORT first" in task.inputs
    assert created.ref.session == ref.session
    (status,) = [t for t in store.queries.status(ref.change) if t.ref == created.ref]
    assert status.links == f"review of {ref} at {checkpoint[:12]}"


def test_review_of_is_for_reviews_and_test_observations_only(store: Store, worktree: Path) -> None:
    ref = implemented(store, worktree)
    write(worktree, "src/a1/core.py", "the candidate\n")
    store.write_report(report(ref.session, ref.task, commit_all(worktree)), ref.change)
    assert code_of(store, kind="research", **reviewing(ref)) == "invalid_content"


def test_a_review_of_a_report_naming_no_checkpoint_is_refused(store: Store, worktree: Path) -> None:
    ref = implemented(store, worktree)
    store.write_report(report(ref.session, ref.task, None), ref.change)
    assert code_of(store, **reviewing(ref)) == "state_refused"


def reviewed(store: Store, worktree: Path) -> tuple[Ref, str]:
    ref = implemented(store, worktree)
    write(worktree, "src/a1/core.py", "the candidate\n")
    checkpoint = commit_all(worktree)
    store.write_report(report(ref.session, ref.task, checkpoint), ref.change)
    return store.create_task(review(**reviewing(ref))).ref, checkpoint  # type: ignore[arg-type]


def test_the_audit_of_a_review_that_wrote_only_its_artifacts_passes(store: Store, worktree: Path) -> None:
    review_ref, checkpoint = reviewed(store, worktree)
    write(worktree, "reports/findings.txt")
    store.write_report(report(review_ref.session, review_ref.task, None), review_ref.change)
    audit = audit_task(store.queries, review_ref)
    assert (audit.verdict, audit.base, audit.checkpoint) == ("passed", checkpoint, checkpoint)


def test_the_audit_of_a_review_that_edited_the_candidate_fails(store: Store, worktree: Path) -> None:
    review_ref, _ = reviewed(store, worktree)
    write(worktree, "src/a1/core.py", "a reviewer's fix\n")
    store.write_report(report(review_ref.session, review_ref.task, None), review_ref.change)
    audit = audit_task(store.queries, review_ref)
    assert audit.verdict == "failed"
    assert "src/a1/core.py" in [v.path for v in audit.violations]


def test_the_audit_of_a_review_whose_tree_moved_past_the_checkpoint_fails(store: Store, worktree: Path) -> None:
    review_ref, _ = reviewed(store, worktree)
    write(worktree, "src/a1/core.py", "committed by the reviewer\n")
    git(worktree, "commit", "-qam", "reviewer commit")
    store.write_report(report(review_ref.session, review_ref.task, None), review_ref.change)
    assert audit_task(store.queries, review_ref).verdict == "failed"


@pytest.mark.parametrize("kind", ["review", "test-observation"])
def test_a_reviews_artifacts_in_the_reviewed_worktree_never_fail_the_reviewed_tasks_audit(
    store: Store, worktree: Path, kind: str
) -> None:
    ref = implemented(store, worktree)
    write(worktree, "src/a1/core.py", "the candidate\n")
    store.write_report(report(ref.session, ref.task, commit_all(worktree)), ref.change)
    assert audit_task(store.queries, ref).verdict == "passed"
    review_ref = store.create_task(review(**reviewing(ref, kind=kind))).ref  # type: ignore[arg-type]
    write(worktree, "reports/findings.txt")
    store.write_report(report(review_ref.session, review_ref.task, None), review_ref.change)
    audit = audit_task(store.queries, ref)
    assert (audit.verdict, audit.violations) == ("passed", ())
    assert audit.not_judged == (f"reports/findings.txt: an artifact of {review_ref}, which its audit judges",)
    assert audit_task(store.queries, review_ref).verdict == "passed"
    write(worktree, "src/b/other.py", "nobody's\n")  # not the review's to write: still the reviewed tree's finding
    audit = audit_task(store.queries, ref)
    assert (audit.verdict, [v.path for v in audit.violations]) == ("failed", ["src/b/other.py"])

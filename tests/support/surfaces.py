"""A task whose audit fails, for the tests of the status surfaces."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from bench.requests import implementation, report_of
from handoff_core.contract.ids import Ref
from handoff_core.contract.proof import signing_key
from handoff_core.contract.scope import Scope
from handoff_core.services.writing.store import Store
from tests.support.gitrepo import FOCUS, add_worktree, commit_all, make_repo, write


def plain_token(ref: Ref) -> str:
    """A report token for a store that holds no Lead's secret: any one seeds a key its REPORT verifies by."""
    return "t" * 24


def audited_and_failed(store: Store, token: Callable[[Ref], str] = plain_token) -> Ref:
    """A worktree task returned completed and proven, whose change leaves its scope: its audit fails."""
    project = store.roots.project_root
    make_repo(project)
    tree = add_worktree(project, "task-a")
    scope = Scope(workspace="required", writable=("src/a1/**",), worktree=str(tree), branch="task-a")
    ref = store.create_task(replace(implementation(scope=scope), signing_key=lambda ref: signing_key(token(ref)))).ref
    write(tree, "src/b/other.py", "not this task's\n")
    checkpoint = commit_all(tree)
    report = report_of(
        ref, status="completed", focused=FOCUS, artifacts="x", verification="y", source_checkpoint=checkpoint
    )
    store.write_report(report, ref.change, token=token(ref))
    return ref

"""The Lead's own session as a writer: its hook denies paths executors hold, admits free ones and its own claims."""

from __future__ import annotations

import json
from pathlib import Path

from bench.requests import implementation, review
from handoff_core.contract.scope import Scope
from handoff_core.services.evidence.lead_guard import decide_lead
from handoff_core.services.writing.store import Store
from tests.support.lead_events import event


def test_a_write_to_a_path_an_executor_holds_is_denied_naming_it(store: Store, project: Path) -> None:
    ref = store.create_task(implementation()).ref
    decision = decide_lead(event(project / "src/a1/core.py", project), store.roots)
    assert not decision.allow
    assert str(ref) in decision.reason
    assert "claim_writer" in decision.reason
    assert "release_writer" in decision.reason


def test_a_free_path_is_allowed(store: Store, project: Path) -> None:
    store.create_task(implementation())
    assert decide_lead(event(project / "src/b/other.py", project), store.roots).allow


def test_the_leads_own_claim_admits_its_paths(store: Store, project: Path) -> None:
    own = Scope(workspace="current", writable=("docs/**",), self_writer="lead")
    store.create_task(implementation("lead-docs", scope=own))
    assert decide_lead(event(project / "docs/guide.md", project), store.roots).allow


def test_a_read_only_tasks_artifacts_are_held_too(store: Store, project: Path) -> None:
    store.create_task(review(kind="test-observation", scope=Scope(read_only=("src/**",), artifacts=("out/**",))))
    assert not decide_lead(event(project / "out/log.txt", project), store.roots).allow


def test_a_path_held_in_the_executors_worktree_is_denied_there_too(store: Store, project: Path, tmp_path: Path) -> None:
    from tests.support.gitrepo import add_worktree, make_repo

    make_repo(project)
    tree = add_worktree(project, "task-a")
    scope = Scope(workspace="required", writable=("src/a1/**",), worktree=str(tree), branch="task-a")
    store.create_task(implementation(scope=scope))
    assert not decide_lead(event(tree / "src/a1/core.py", tree), store.roots).allow
    assert not decide_lead(event(project / "src/a1/core.py", project), store.roots).allow


def test_an_unreadable_task_holds_everything_and_a_malformed_event_denies(store: Store, project: Path) -> None:
    ref = store.create_task(implementation()).ref
    task = store.roots.task_dir(ref) / "TASK.md"
    task.chmod(0o644)
    task.write_text("---\nschema_version: 1\n---\nbroken")
    assert not decide_lead(event(project / "anything.txt", project), store.roots).allow
    assert not decide_lead(b"{not json", store.roots).allow


def test_a_tool_that_writes_no_file_is_not_judged(store: Store, project: Path) -> None:
    store.create_task(implementation())
    data = json.dumps({"tool_name": "Read", "tool_input": {"file_path": "x"}, "cwd": str(project)}).encode()
    assert decide_lead(data, store.roots).allow

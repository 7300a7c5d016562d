"""A TASK as the hook reads it: pinned to its published bytes, and read the lean way exactly as the
contract's parser reads it."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.requests import implementation, review
from handoff_core.contract.scope import Scope, SharedPath
from handoff_core.contract.task_file import parse_task
from handoff_core.layout import MAX_FILE_BYTES
from handoff_core.services.evidence import task_pin
from handoff_core.services.evidence.task_pin import TaskUnreadable, read_pinned
from handoff_core.services.writing.store import Store

SCOPES = [
    Scope(workspace="current", writable=("src/a1/**", "docs/*.md"), read_only=("docs/**",)),
    Scope(workspace="current", writable=("src/a1/**",), shared=(SharedPath("pyproject.toml", "lead"),)),
    Scope(workspace="current", writable=("src/é/**",)),  # non-ASCII: the renderer escapes it, read the full way
    Scope(workspace="current", writable=("src/a1/**",), resources=("port:5432",), sandbox="if-available"),
]


def test_the_size_limit_is_the_contract_s() -> None:
    assert task_pin.MAX_TASK_BYTES == MAX_FILE_BYTES


@pytest.mark.parametrize("scope", SCOPES)
def test_the_lean_reading_agrees_with_the_contract_s_parser(store: Store, scope: Scope) -> None:
    stored = store.create_task(implementation(scope=scope))
    pinned = read_pinned(str(store.roots.state_root), str(stored.ref), stored.sha256)
    full = parse_task(stored.text)
    lean = pinned.task
    assert isinstance(lean, task_pin.LeanTask) == all(glob.isascii() for glob in scope.writable)
    assert (lean.kind, lean.task, lean.session) == (full.kind, full.task, full.session)
    assert (lean.scope.writable, lean.scope.artifacts, lean.scope.worktree, lean.scope.dirty) == (
        full.scope.writable,
        full.scope.artifacts,
        full.scope.worktree,
        full.scope.dirty,
    )
    assert [(s.path, s.owner) for s in lean.scope.shared] == [(s.path, s.owner) for s in full.scope.shared]
    assert (lean.scope.branch, lean.scope.remote, lean.scope.resources, lean.scope.sandbox) == (
        full.scope.branch,
        full.scope.remote,
        full.scope.resources,
        full.scope.sandbox,
    )


def test_a_read_only_task_reads_its_artifacts(store: Store) -> None:
    stored = store.create_task(review(scope=Scope(read_only=("src/**",), artifacts=(".pytest_cache/**",))))
    assert read_pinned(str(store.roots.state_root), str(stored.ref), stored.sha256).task.scope.artifacts == (
        ".pytest_cache/**",
    )


def test_a_task_whose_bytes_changed_is_refused_when_pinned_and_read_when_not(store: Store) -> None:
    stored = store.create_task(implementation())
    path: Path = stored.path
    path.write_text(path.read_text().replace('writable: ["src/a1/**"]', 'writable: ["**"]'))
    with pytest.raises(TaskUnreadable, match="not the ones published"):
        read_pinned(str(store.roots.state_root), str(stored.ref), stored.sha256)
    assert read_pinned(str(store.roots.state_root), str(stored.ref), None).task.scope.writable == ("**",)


@pytest.mark.parametrize("pin", ["0" * 63, "A" * 64, "../x"])
def test_a_malformed_pin_or_ref_is_refused(store: Store, pin: str) -> None:
    stored = store.create_task(implementation())
    with pytest.raises(TaskUnreadable):
        read_pinned(str(store.roots.state_root), str(stored.ref), pin)
    with pytest.raises(TaskUnreadable):
        read_pinned(str(store.roots.state_root), "../../etc/passwd", None)


def test_the_authorised_actions_are_read_from_the_scope_block(store: Store) -> None:
    scope = Scope(workspace="current", writable=("src/a1/**",), actions=("commit", "push"), sandbox="off")
    stored = store.create_task(implementation(scope=scope))
    pinned = read_pinned(str(store.roots.state_root), str(stored.ref), stored.sha256)
    assert isinstance(pinned.task, task_pin.LeanTask)
    assert pinned.authorised == frozenset({"commit", "push"})

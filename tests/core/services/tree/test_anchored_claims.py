"""Claims and verdicts judged with the Lead's anchor: each rests on its TASK as published."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.requests import implementation, review
from handoff_core.contract.anchor import CHANGED_HOLD, TASK_CHANGED
from handoff_core.contract.ids import Ref
from handoff_core.contract.scope import Scope
from handoff_core.errors import OwnershipConflict
from handoff_core.services.capabilities.tokens import task_anchor
from handoff_core.services.tree.queries import Queries
from handoff_core.services.tree.verdicts import Verdicts
from handoff_core.services.writing.store import Store

SECRET = b"s" * 32


@pytest.fixture(params=["scanned", "watched"])
def lead(project: Path, state_root: Path, tmp_path: Path, request: pytest.FixtureRequest) -> Store:
    """The Lead's store: it anchors what it publishes and judges by its anchor; scanned as a fresh
    process does, and watched as a server does."""
    store = Store(state_root, project)
    store.queries.use_anchor(lambda: task_anchor(SECRET, state_root, tmp_path / "config" / "secret"))
    if request.param == "watched":
        store.queries.keep_claim_rows()
    return store


def rewritten(store: Store, ref: Ref, old: str, new: str) -> bytes:
    path = store.roots.task_dir(ref) / "TASK.md"
    published = path.read_bytes()
    path.chmod(0o644)
    path.write_bytes(published.replace(old.encode(), new.encode()))
    return published


def test_a_task_narrowed_after_dispatch_holds_the_whole_workspace_and_every_resource_until_put_back(
    lead: Store,
) -> None:
    scope = Scope(workspace="current", writable=("src/a1/**",), resources=("db:x",))
    ref = lead.create_task(implementation(scope=scope)).ref
    assert [c.writable for c in lead.queries.claims()] == [("src/a1/**",)]
    published = rewritten(lead, ref, "src/a1/**", "src/a1/core.py")
    (held,) = lead.queries.claims()
    assert (held.ref, held.writable, held.held_because) == (ref, ("**",), CHANGED_HOLD)
    for request in (
        review("port", scope=Scope(workspace=None, resources=("db:x",))),
        review("beside", scope=Scope(workspace=None, artifacts=("src/a1/other/**",))),
        review("far", scope=Scope(workspace=None, resources=("db:y",))),  # every resource: what it held is unknown
    ):
        with pytest.raises(OwnershipConflict):
            lead.create_task(request)
    (lead.roots.task_dir(ref) / "TASK.md").write_bytes(published)  # put back: its published scope again
    assert [c.writable for c in lead.queries.claims()] == [("src/a1/**",)]


def test_a_hand_written_task_holds_its_globs_until_the_lead_governs_its_state_root(
    project: Path, state_root: Path, tmp_path: Path, watched: bool
) -> None:
    """One long-lived reader, before and after the Lead's first dispatch: what it judged is judged again."""
    Store(state_root, project).create_task(implementation())  # no anchor line: as written by hand
    lead = Store(state_root, project)
    queries = lead.queries = Queries(lead.roots, Verdicts(settle_seconds=0))  # every verdict held at once
    queries.use_anchor(lambda: task_anchor(SECRET, state_root, tmp_path / "config" / "secret"))
    if watched:
        queries.keep_claim_rows()
    assert [c.writable for c in queries.claims()] == [("src/a1/**",)]
    assert [s.problems for s in queries.status()] == [()]
    assert queries.held_verdicts == 1
    lead.create_task(review("first-anchored"))  # records that the Lead's secret governs the state root
    assert [c.held_because for c in queries.claims()] == [CHANGED_HOLD]
    assert [TASK_CHANGED in s.problems for s in queries.status()] == [True, False]


@pytest.fixture(params=[False, True], ids=["scanned", "watched"])
def watched(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)

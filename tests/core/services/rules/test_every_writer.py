"""Every writer counted (resources and artifacts whatever the kind; original-contract TASKs out of the scan)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.requests import implementation, review
from handoff_core.contract.scope import Scope
from handoff_core.errors import OwnershipConflict
from handoff_core.services.rules.ownership import Claim
from handoff_core.services.writing.dispatch import TaskRequest
from handoff_core.services.writing.store import Store
from tests.support.changes import CHANGE
from tests.support.writers import original_task


def observation(topic: str, *, artifacts: tuple[str, ...] = (), resources: tuple[str, ...] = ()) -> TaskRequest:
    scope = Scope(read_only=("src/**",), artifacts=artifacts, resources=resources)
    return review(topic, kind="test-observation", scope=scope)


def refused(store: Store, request: TaskRequest) -> OwnershipConflict:
    with pytest.raises(OwnershipConflict) as caught:
        store.create_task(request)
    assert caught.value.code == "ownership_conflict"
    return caught.value


def with_port(topic: str = "implement-a1") -> TaskRequest:
    return implementation(topic, scope=Scope(workspace="current", writable=("src/a1/**",), resources=("port:5432",)))


def test_a_test_observation_is_refused_a_port_an_implementation_holds(store: Store) -> None:
    writer = store.create_task(with_port()).ref
    error = refused(store, observation("observe", resources=("port:5432",)))
    assert str(writer) in error.message
    assert "port:5432" in error.message
    assert "release_writer" in error.message


def test_an_implementation_is_refused_a_port_a_test_observation_holds(store: Store) -> None:
    observer = store.create_task(observation("observe", resources=("port:5432",))).ref
    assert str(observer) in refused(store, with_port()).message


def test_two_read_only_tasks_may_not_hold_the_same_resource(store: Store) -> None:
    store.create_task(observation("observe-a", resources=("db:test",)))
    refused(store, observation("observe-b", resources=("db:test",)))
    store.create_task(observation("observe-c", resources=("db:other",)))


def test_a_read_only_tasks_artifacts_may_not_overlap_a_writers_globs(store: Store) -> None:
    writer = store.create_task(implementation(scope=Scope(workspace="current", writable=("src/a/**",)))).ref
    error = refused(store, observation("observe", artifacts=("src/a/**",)))
    assert str(writer) in error.message
    assert "src/a/**" in error.message
    store.create_task(observation("observe-b", artifacts=("build/out/**",)))


def test_artifacts_of_two_read_only_tasks_may_not_overlap(store: Store) -> None:
    first = store.create_task(observation("observe-a", artifacts=(".pytest_cache/**",))).ref
    assert str(first) in refused(store, observation("observe-b", artifacts=(".pytest_cache/v/**",))).message


def test_a_writer_may_not_write_where_a_read_only_task_writes_its_artifacts(store: Store) -> None:
    observer = store.create_task(observation("observe", artifacts=("reports/**",))).ref
    error = refused(store, implementation(scope=Scope(workspace="current", writable=("reports/x/**",))))
    assert str(observer) in error.message


def test_the_claim_of_a_read_only_task_ends_with_its_release(store: Store) -> None:
    observer = store.create_task(observation("observe", resources=("port:5432",))).ref
    store.release_writer(observer, "none", "never started")
    store.create_task(with_port())


def test_a_read_only_task_holding_nothing_is_no_writer_and_no_claim(store: Store) -> None:
    store.create_task(implementation())
    store.create_task(observation("observe", artifacts=("out/**",)))
    claims = store.queries.claims()
    assert sorted(claim.writer for claim in claims) == [False, True]
    assert sum(claim.writer for claim in claims) == 1  # the writer cap counts writers only


def test_a_read_only_dispatch_holding_artifacts_reads_the_claims(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    reads: list[str] = []
    claims = store.queries.claims

    def counted() -> list[Claim]:
        reads.append("claims")
        return claims()

    monkeypatch.setattr(store.queries, "claims", counted)
    store.create_task(review("plain"))
    assert reads == []
    store.create_task(observation("observe", artifacts=("out/**",)))
    assert reads == ["claims"]


def test_an_original_contract_task_without_a_report_blocks_no_dispatch(store: Store, state_root: Path) -> None:
    original_task(state_root)
    store.create_task(implementation(new_round=True))
    assert [claim.ref.task for claim in store.queries.claims()] == ["001-implement-a1"]


def test_status_labels_an_original_contract_task_and_shows_no_claim(store: Store, state_root: Path) -> None:
    original_task(state_root)
    (found,) = store.queries.status(CHANGE)
    assert found.original
    assert found.label == "original-contract:dispatched"
    assert (found.claims_writer, found.claim, found.problems) == (False, "", ())
    assert any("original contract" in note for note in found.notes)


def test_a_task_of_ours_gone_bad_still_holds_the_whole_workspace(store: Store, state_root: Path) -> None:
    folder = original_task(state_root)
    (folder / "TASK.md").write_text("---\nschema_version: 1\n---\n# broken")
    refused(store, implementation(new_round=True))
    (found,) = store.queries.status(CHANGE)
    assert not found.original
    assert found.claims_writer


def test_plain_text_in_place_of_a_task_still_holds_the_whole_workspace(store: Store, state_root: Path) -> None:
    folder = original_task(state_root)
    (folder / "TASK.md").write_text("not a TASK\n")  # no group of the original contract: not one of its TASKs
    refused(store, implementation(new_round=True))

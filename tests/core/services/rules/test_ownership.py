"""Single-writer ownership at create_task, derived from the files alone, on real trees."""

from __future__ import annotations

import multiprocessing
import os
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bench.requests import implementation, report_of, review
from handoff_core.contract.scope import Scope, SharedPath
from handoff_core.errors import HandoffError, InvalidContent, OwnershipConflict
from handoff_core.layout import ReleaseKind, Workspace
from handoff_core.services.rules.ownership import Claim, writer_slots
from handoff_core.services.writing.dispatch import TaskRequest
from handoff_core.services.writing.store import Store


def required(topic: str, *globs: str, **overrides: object) -> TaskRequest:
    """A writer in a separate worktree, of a plan that declares three parallel writers."""
    return implementation(
        topic, **{"scope": Scope(workspace="required", writable=globs), "writer_limit": 3, **overrides}
    )


def conflict(store: Store, request: TaskRequest) -> OwnershipConflict:
    with pytest.raises(OwnershipConflict) as caught:
        store.create_task(request)
    assert caught.value.code == "ownership_conflict"
    return caught.value


def test_a_second_current_writer_is_refused_naming_the_holder_and_the_way_out(store: Store) -> None:
    holder = store.create_task(implementation()).ref
    error = conflict(store, implementation("other-work", goal="Something else."))
    assert str(holder) in error.message
    assert "age" in error.message
    assert "release_writer" in error.message


def test_overlapping_required_globs_are_refused(store: Store) -> None:
    store.create_task(required("a", "src/**/*.py"))
    error = conflict(store, required("b", "src/a/*"))
    assert "src/a/" in error.message


def test_disjoint_required_writers_run_in_parallel_beside_a_current_one(store: Store) -> None:
    store.create_task(implementation(writer_limit=3))  # current, src/a1/**
    store.create_task(required("b", "src/b/**"))
    store.create_task(required("c", "docs/**"))
    assert len(store.queries.claims()) == 3


def test_the_writer_cap_is_enforced(store: Store) -> None:
    for topic in ("a", "b", "c"):
        store.create_task(required(topic, f"src/{topic}/**"))
    error = conflict(store, required("d", "src/d/**"))
    assert "cap is 3" in error.message


def test_the_writer_cap_is_configurable(state_root: Path, project: Path) -> None:
    store = Store(state_root, project, writer_cap=1)
    store.create_task(required("a", "src/a/**"))
    conflict(store, required("b", "src/b/**"))


def test_a_shared_path_has_exactly_one_owner(store: Store) -> None:
    def shared(topic: str, owner: str) -> TaskRequest:
        scope = Scope(
            workspace="required",
            writable=(f"src/{topic}/**",),
            read_only=(),
            shared=(SharedPath("pyproject.toml", owner),),
        )
        return implementation(topic, scope=scope, writer_limit=3)

    store.create_task(shared("a", "lead"))
    conflict(store, shared("b", "b"))
    store.create_task(shared("c", "lead"))


def test_read_only_tasks_never_block_and_are_never_blocked(store: Store) -> None:
    store.create_task(implementation())
    for topic in ("r1", "r2", "r3", "r4"):
        store.create_task(review(topic))
    assert len(store.queries.claims()) == 1


def test_a_read_only_dispatch_never_reads_the_claims_of_the_history(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.create_task(implementation())
    reads: list[str] = []
    claims = store.queries.claims

    def counted_claims() -> list[Claim]:
        reads.append("claims")
        return claims()

    monkeypatch.setattr(store.queries, "claims", counted_claims)
    store.create_task(review("r1"))
    assert reads == []  # a stat per task of every active change, for an answer that cannot refuse it
    conflict(store, implementation("other-work", goal="Something else."))
    assert reads == ["claims"]


def test_writable_globs_on_a_read_only_kind_are_refused(store: Store) -> None:
    conflict(store, review(scope=Scope(workspace=None, writable=("src/**",))))


def test_a_claim_has_no_ttl(store: Store) -> None:
    holder = store.create_task(implementation())
    year_ago = (datetime.now(UTC) - timedelta(days=365)).timestamp()
    os.utime(holder.path, (year_ago, year_ago))
    conflict(store, implementation("later", goal="Later work."))


def test_a_report_ends_the_claim(store: Store) -> None:
    holder = store.create_task(implementation()).ref
    focused = "Done. Tested. Stopped. Next: review."
    store.write_report(
        report_of(holder, status="completed", focused=focused, artifacts="x", verification="y"),
        holder.change,
    )
    store.create_task(implementation("next", goal="Next work."))


@pytest.mark.parametrize("kind", ["stopped", "none"])
def test_a_release_with_evidence_ends_the_claim(store: Store, kind: ReleaseKind) -> None:
    holder = store.create_task(implementation()).ref
    store.release_writer(holder, kind, "orca worker 2 exited (code 137)")
    store.create_task(implementation("next", goal="Next work."))


def test_claims_span_every_change_under_the_state_root(store: Store, state_root: Path) -> None:
    from tests.support.changes import make_change

    make_change(state_root, "2026-11-30-other")
    store.create_task(implementation())
    conflict(store, implementation("elsewhere", change="2026-11-30-other"))


def test_an_identical_retry_returns_the_task_already_created(store: Store) -> None:
    first = store.create_task(implementation())
    again = store.create_task(implementation())
    assert (again.ref, again.created, again.sha256) == (first.ref, False, first.sha256)
    in_round = store.create_task(implementation(session=first.ref.session))
    assert in_round.ref == first.ref


def test_an_identical_request_for_a_new_round_ten_minutes_later_is_a_new_task(state_root: Path, project: Path) -> None:
    now = [datetime(2026, 11, 30, 4, 45, tzinfo=UTC)]
    store = Store(state_root, project, clock=lambda: now[0])
    first = store.create_task(review())
    now[0] += timedelta(minutes=11)
    later = store.create_task(review(new_round=True))
    assert later.created
    assert later.ref.session != first.ref.session


def test_a_caller_can_force_a_new_task(store: Store) -> None:
    first = store.create_task(review())
    forced = store.create_task(review(force_new=True))
    assert forced.created
    assert (forced.ref.session, forced.ref.task) == (first.ref.session, "002-review-a1")


def test_a_different_request_is_not_a_retry(store: Store) -> None:
    first = store.create_task(review())
    other = store.create_task(review(goal="Review something else.", session=first.ref.session))
    assert other.ref.task == "002-review-a1"


def _dispatch(
    state_root: str, topic: str, workspace: Workspace, globs: tuple[str, ...], barrier: threading.Barrier
) -> str:
    store = Store(Path(state_root))
    request = implementation(
        topic, goal=f"Work on {topic}.", scope=Scope(workspace=workspace, writable=globs), writer_limit=8
    )
    barrier.wait(timeout=60)
    try:
        return str(store.create_task(request).ref)
    except HandoffError as exc:
        return exc.code


def race(state_root: Path, jobs: list[tuple[str, Workspace, tuple[str, ...]]]) -> list[str]:
    context = multiprocessing.get_context("spawn")
    barrier = context.Manager().Barrier(len(jobs))
    with context.Pool(len(jobs)) as pool:
        return pool.starmap(_dispatch, [(str(state_root), *job, barrier) for job in jobs])


@pytest.mark.slow
def test_six_simultaneous_current_dispatches_leave_exactly_one_writer(store: Store) -> None:
    outcomes = race(store.roots.state_root, [(f"w{i}", "current", (f"src/w{i}/**",)) for i in range(6)])
    assert outcomes.count("ownership_conflict") == 5
    assert len(store.queries.claims()) == 1


@pytest.mark.slow
def test_simultaneous_disjoint_required_dispatches_all_succeed(store: Store) -> None:
    outcomes = race(store.roots.state_root, [(f"w{i}", "required", (f"src/w{i}/**",)) for i in range(3)])
    assert "ownership_conflict" not in outcomes
    assert len(store.queries.claims()) == 3


@pytest.mark.slow
def test_simultaneous_overlapping_dispatches_leave_one_writer_per_overlap_group(
    state_root: Path, project: Path
) -> None:
    store = Store(state_root, project, writer_cap=8)
    groups = {"a": ("src/a/**", "src/a/x/*", "src/**/*.py"), "b": ("docs/**", "docs/*.md")}
    jobs: list[tuple[str, Workspace, tuple[str, ...]]] = [
        (f"{g}{i}", "required", (glob,)) for g, globs in groups.items() for i, glob in enumerate(globs)
    ]
    del store
    outcomes = race(state_root, jobs)
    claims = Store(state_root, project).queries.claims()
    winners = {claim.ref.task.split("-", 1)[1][0] for claim in claims}
    assert sorted(c.ref.task.split("-", 1)[1][0] for c in claims) == ["a", "b"]
    assert winners == {"a", "b"}
    assert outcomes.count("ownership_conflict") == len(jobs) - 2


def test_a_claim_remembered_by_a_long_lived_server_ends_with_the_report(store: Store) -> None:
    holder = store.create_task(implementation())
    hour_ago = (datetime.now(UTC) - timedelta(hours=1)).timestamp()
    os.utime(holder.path.parent, (hour_ago, hour_ago))  # settled: the index keeps it
    assert [c.ref for c in store.queries.claims()] == [holder.ref]
    assert [c.ref for c in store.queries.claims()] == [holder.ref]
    focused = "Done. Tested. Stopped. Next: review."
    store.write_report(
        report_of(holder.ref, status="completed", focused=focused, artifacts="x", verification="y"),
        holder.ref.change,
    )
    assert store.queries.claims() == []
    store.create_task(implementation("next", goal="Next work."))


def test_a_plan_that_declares_no_limit_gets_one_writer(store: Store) -> None:
    store.create_task(implementation("a", scope=Scope(workspace="required", writable=("src/a/**",))))
    error = conflict(store, implementation("b", scope=Scope(workspace="required", writable=("src/b/**",))))
    assert "cap is 1" in error.message


def test_the_cap_is_the_smallest_of_plan_project_and_platform(state_root: Path, project: Path) -> None:
    store = Store(state_root, project, writer_cap=2)
    store.create_task(required("a", "src/a/**", writer_limit=5))
    store.create_task(required("b", "src/b/**", writer_limit=5))
    assert "cap is 2" in conflict(store, required("c", "src/c/**", writer_limit=5)).message


def test_a_named_resource_is_exclusive_among_writers(store: Store) -> None:
    store.create_task(
        required("a", "src/a/**", scope=Scope(workspace="required", writable=("src/a/**",), resources=("port:5432",)))
    )
    error = conflict(
        store,
        required("b", "src/b/**", scope=Scope(workspace="required", writable=("src/b/**",), resources=("port:5432",))),
    )
    assert "port:5432" in error.message
    store.create_task(
        required("c", "src/c/**", scope=Scope(workspace="required", writable=("src/c/**",), resources=("db:test",)))
    )


@pytest.mark.parametrize("name", ["Port:1", "port 5432", "-x", "db:"])
def test_a_resource_that_is_not_a_plain_name_is_refused(store: Store, name: str) -> None:
    with pytest.raises(InvalidContent):
        store.create_task(
            required("a", "src/a/**", scope=Scope(workspace="required", writable=("src/a/**",), resources=(name,)))
        )


def test_a_writer_may_not_reach_a_path_another_task_owns_as_shared(store: Store) -> None:
    owner = Scope(
        workspace="required", writable=("src/a/**",), read_only=(), shared=(SharedPath("pyproject.toml", "lead"),)
    )
    store.create_task(required("a", "src/a/**", scope=owner))
    error = conflict(
        store, required("b", "src/b/**", scope=Scope(workspace="required", writable=("src/b/**", "*.toml")))
    )
    assert "pyproject.toml" in error.message


def test_a_path_another_task_writes_cannot_be_declared_shared(store: Store) -> None:
    store.create_task(required("a", "src/a/**"))
    shared = Scope(
        workspace="required", writable=("src/b/**",), read_only=(), shared=(SharedPath("src/a/x.py", "lead"),)
    )
    assert "written by another task" in conflict(store, required("b", "src/b/**", scope=shared)).message


def test_a_retry_cites_the_earlier_report_and_waits_for_it(store: Store) -> None:
    first = store.create_task(implementation()).ref
    with pytest.raises(HandoffError) as caught:
        store.create_task(implementation("implement-a1-fix", retry_of=first))
    assert caught.value.code == "state_refused"
    focus = "Tried the parser. It failed on CRLF. Stopped there. Next: a fix."
    store.write_report(
        report_of(first, status="failed", focused=focus, artifacts="src/a1/x.py", verification="pytest: exit 1"),
        first.change,
    )
    retry = store.create_task(implementation("implement-a1-fix", retry_of=first))
    text = (store.roots.task_dir(retry.ref) / "TASK.md").read_text()
    assert f"Retry of `{first}`: read its REPORT.md first" in text
    assert not any("earlier attempts" in warning for warning in retry.warnings)  # one failure is no pattern


def test_a_fourth_attempt_after_three_failures_warns(store: Store) -> None:
    focus = "Tried it. It failed. Stopped there. Next: rethink."
    earlier = None
    for _ in range(3):
        ref = store.create_task(implementation("port-parser", retry_of=earlier, force_new=True)).ref
        store.write_report(
            report_of(ref, status="failed", focused=focus, artifacts="none", verification="pytest: exit 1"),
            ref.change,
        )
        earlier = ref
    fourth = store.create_task(implementation("port-parser", retry_of=earlier, force_new=True))
    assert fourth.warnings
    assert "3 earlier attempts" in fourth.warnings[0]


def test_a_report_after_a_release_is_evidence_but_flagged_everywhere(store: Store) -> None:
    released = store.create_task(implementation()).ref
    store.release_writer(released, "stopped", "pane 3 exited")
    second = store.create_task(implementation("second-writer", goal="Another change.")).ref
    focus = "Finished after all. Kept the API. Stopped after tests. Next: review."
    store.write_report(
        report_of(released, status="completed", focused=focus, artifacts="x", verification="y"),
        released.change,
    )
    status = {str(t.ref): t for t in store.queries.status()}
    note = status[str(released)].notes[0]
    assert "came after RELEASE.md" in note
    assert str(second) in note
    assert any("came after RELEASE.md" in w for w in store.queries.validate(released, "return").warnings)
    from handoff_core.services.tree.report_view import read_handoff

    assert "came after RELEASE.md" in read_handoff(store.queries, released).flags[0]


def test_a_writer_dispatched_in_the_release_s_clock_tick_is_named_by_the_late_report(store: Store) -> None:
    released = store.create_task(implementation()).ref
    store.release_writer(released, "stopped", "pane 3 exited")
    second = store.create_task(implementation("second-writer", goal="Another change.")).ref
    # File times come from a coarse clock: a TASK published just after the RELEASE can share its time.
    tick = (store.roots.task_dir(second) / "TASK.md").stat().st_mtime_ns
    os.utime(store.roots.task_dir(released) / "RELEASE.md", ns=(tick, tick))
    focus = "Finished after all. Kept the API. Stopped after tests. Next: review."
    store.write_report(
        report_of(released, status="completed", focused=focus, artifacts="x", verification="y"),
        released.change,
    )
    note = {t.ref: t for t in store.queries.status()}[released].notes[0]
    assert str(second) in note


def test_a_second_current_writer_on_disjoint_globs_is_told_the_parallel_way(store: Store) -> None:
    store.create_task(implementation(writer_limit=3))  # current, src/a1/**
    disjoint = implementation("other", scope=Scope(workspace="current", writable=("docs/**",)), writer_limit=3)
    error = conflict(store, disjoint)
    assert 'workspace="required"' in error.message
    assert "writer_limit" in error.message
    assert "non-overlapping" in error.message


def test_a_writer_without_writer_limit_past_the_first_is_told_to_declare_it(store: Store) -> None:
    store.create_task(required("a", "src/a/**"))
    error = conflict(store, implementation("b", scope=Scope(workspace="required", writable=("src/b/**",))))
    assert "no writer_limit" in error.message
    assert 'workspace="required"' in error.message


def test_the_free_writer_slots_are_exactly_what_create_task_admits(state_root: Path, project: Path) -> None:
    store = Store(state_root, project, writer_cap=3)
    store.create_task(implementation())  # one current writer, no writer_limit
    slots = writer_slots(len(store.queries.claims()), store.writer_cap)
    assert (slots.free, slots.with_limit, slots.limit) == (0, 2, 3)
    conflict(store, implementation("b", scope=Scope(workspace="required", writable=("src/b/**",))))  # free 0: refused
    admitted = 0
    for topic in ("c", "d", "e"):
        try:
            store.create_task(
                implementation(topic, scope=Scope(workspace="required", writable=(f"src/{topic}/**",)), writer_limit=3)
            )
            admitted += 1
        except OwnershipConflict:
            break
    assert admitted == slots.with_limit
    assert "free writer slots: 0 without writer_limit; 2 with writer_limit=3" in slots.describe()


def test_an_overlapping_writer_is_told_to_leave_the_covered_path_out(store: Store) -> None:
    store.create_task(required("a", "src/**/*.py"))
    error = conflict(store, required("b", "src/a/*"))
    assert "leave that path out" in error.message

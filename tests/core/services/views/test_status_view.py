"""The one status view: problems and the reason for attention, and audits bounded per answer."""

from __future__ import annotations

from pathlib import Path

from bench.requests import report_of, review
from handoff_core.files.executor_home import cache_root
from handoff_core.services.evidence.endings import record_ending
from handoff_core.services.evidence.verifications import Recorded, record_verification
from handoff_core.services.tree.status import TaskStatus
from handoff_core.services.views.status_view import (
    NOT_AUDITED,
    AuditBudget,
    attention_of,
    blocker_of,
    problems_of,
    task_facts,
)
from handoff_core.services.writing.store import Store
from tests.support.gitrepo import FOCUS
from tests.support.surfaces import audited_and_failed


def returned(store: Store) -> TaskStatus:
    ref = store.create_task(review()).ref
    report = report_of(ref, status="completed", focused=FOCUS, artifacts="notes", verification="read")
    store.write_report(report, ref.change)  # as by hand: no proof
    (status,) = store.queries.status(ref.change)
    return status


def test_a_return_without_proof_needs_attention_and_says_so_among_its_problems(store: Store) -> None:
    status = returned(store)
    assert problems_of(status) == ("REPORT proof: absent",)
    assert attention_of(status).startswith("REPORT proof absent")


def test_a_failed_audit_comes_before_a_missing_proof_and_a_passed_one_is_no_problem(store: Store) -> None:
    status = returned(store)
    assert attention_of(status, "failed").startswith("audit failed")
    assert problems_of(status, "passed") == problems_of(status)
    assert attention_of(status._replace(proof="valid"), "passed") == ""


def test_an_audit_left_undone_by_the_budget_is_said_so_but_is_no_reason_for_attention(store: Store) -> None:
    ref = audited_and_failed(store)
    (status,) = store.queries.status(ref.change)
    assert AuditBudget(store.queries, limit=0).verdict(status) == NOT_AUDITED
    assert attention_of(status, NOT_AUDITED) == ""
    budget = AuditBudget(store.queries, limit=1)
    assert budget.verdict(status) == "failed"
    assert budget.verdict(status._replace(state="dispatched")) == ""  # only returned worktree tasks are audited


def test_an_open_task_whose_session_ended_without_a_report_needs_attention_until_it_reports(store: Store) -> None:
    ref = store.create_task(review()).ref
    root = store.roots.state_root
    (status,) = store.queries.status(ref.change)
    assert task_facts(status, 0.0, queries=store.queries).attention == ""
    record_ending(str(root), str(ref), "session-1")  # as the Stop hook records a session it let go
    (status,) = store.queries.status(ref.change)
    facts = task_facts(status, 0.0, queries=store.queries)
    assert facts.attention.startswith("ended without a report (session session-1)")
    assert facts.attention in facts.problems
    report = report_of(ref, status="blocked", focused=FOCUS, artifacts="notes", verification="read")
    store.write_report(report, ref.change)
    (status,) = store.queries.status(ref.change)
    assert not any("ended without a report" in p for p in task_facts(status, 0.0, queries=store.queries).problems)


def test_the_last_verification_of_a_return_is_shown_and_one_that_did_not_pass_needs_attention(store: Store) -> None:
    status = returned(store)._replace(proof="valid")
    root = store.roots.state_root
    assert task_facts(status, 0.0, queries=store.queries).verification == ""
    why = "1 of 1 check(s) failed on replay: check 1 `pytest` exited 1"
    assert record_verification(str(root), str(status.ref), Recorded("failed", why, 1.0), status.closed_at or 0.0)
    facts = task_facts(status, 0.0, queries=store.queries)
    assert facts.verification == "failed"
    assert facts.attention == f"verification failed: {why}"
    assert facts.attention in facts.problems
    assert task_facts(status, 0.0, "failed", queries=store.queries).attention.startswith("audit failed")
    assert record_verification(
        str(root), str(status.ref), Recorded("passed", "every check (1)", 2.0), status.closed_at or 0.0
    )
    assert (
        task_facts(status, 0.0, queries=store.queries).verification,
        task_facts(status, 0.0, queries=store.queries).attention,
    ) == (
        "passed",
        "",
    )


def test_a_verification_of_another_report_or_edited_by_hand_is_not_shown(store: Store) -> None:
    status = returned(store)
    root = store.roots.state_root
    mtime = status.closed_at or 0.0
    record_verification(str(root), str(status.ref), Recorded("passed", "every check (1)", 1.0), mtime + 1.0)
    assert task_facts(status, 0.0, queries=store.queries).verification == ""  # it judged a REPORT that is not there now
    record_verification(str(root), str(status.ref), Recorded("failed", "exited 1", 1.0), mtime)
    files = [p for p in Path(cache_root(), "verifications").rglob("*") if p.is_file() and p.name != "cache.key"]
    record = max((p for p in files if b'"exited 1"' in p.read_bytes()), key=lambda p: p.stat().st_mtime_ns)
    record.write_bytes(record.read_bytes().replace(b'"failed"', b'"passed"'))
    assert task_facts(status, 0.0, queries=store.queries).verification == ""  # no longer signed by this user's key


def test_a_blocked_or_failed_return_says_its_blocker_in_one_visible_line_and_no_other_return_has_one(
    store: Store,
) -> None:
    said = {}
    for topic, status, problems in (
        ("review-blocked", "blocked", "Waiting on\n\n  the \u202edb\u202c   schema."),
        ("review-failed", "failed", ""),  # left out: write_report's 无 (none)
        ("review-done", "completed", "Nothing left."),
    ):
        ref = store.create_task(review(topic)).ref
        fields = {"focused": FOCUS, "artifacts": "notes", "verification": "read"}
        store.write_report(report_of(ref, status=status, problems=problems or "无", **fields), ref.change)
        (found,) = (s for s in store.queries.status(ref.change) if s.ref == ref)
        said[status] = blocker_of(found, store.queries)
        assert said[status] in task_facts(found, 0.0, queries=store.queries).problems or not said[status]
    assert said["blocked"] == "REPORT blocked: Waiting on the \\u202edb\\u202c schema."
    assert said["failed"] == "REPORT failed: its problems section names no blocker; read the REPORT"
    assert said["completed"] == ""

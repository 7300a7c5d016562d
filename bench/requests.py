"""Task requests and reports the bench writes (the tests use the same builders): plain core types, no test tools."""

from __future__ import annotations

from typing import Any

from handoff_core.contract.ids import Ref
from handoff_core.contract.report import Report
from handoff_core.contract.scope import Scope
from handoff_core.contract.task import TaskBody
from handoff_core.services.writing.dispatch import TaskRequest

__all__ = ["DEMO", "implementation", "report_of", "review"]

DEMO = "2026-11-30-demo"


def implementation(topic: str = "implement-a1", **overrides: object) -> TaskRequest:
    fields: dict[str, Any] = {
        "change": DEMO,
        "topic": topic,
        "kind": "implementation",
        "goal": "Lead: main session. Executor implements A1 so that `pytest tests/a1` passes.",
        "inputs": "- SPEC.md section A1\n- decision: keep the public API",
        "scope": Scope(workspace="current", writable=("src/a1/**",), read_only=("docs/**",)),
        "acceptance": "`pytest tests/a1 -q` exits 0.",
    }
    fields.update(overrides)
    keys = (
        "change",
        "topic",
        "session",
        "new_round",
        "force_new",
        "writer_limit",
        "retry_of",
        "review_of",
        "signing_key",
    )
    request = {key: fields.pop(key) for key in keys if key in fields}
    return TaskRequest(body=TaskBody(**fields), **request)


def review(topic: str = "review-a1", **overrides: object) -> TaskRequest:
    base = {
        "kind": "review",
        # No artifacts: a review writes only its REPORT, so any number of them run side by side.
        "scope": Scope(workspace=None, writable=(), read_only=("src/**",), shared=(), artifacts=()),
    }
    return implementation(topic, **{**base, **overrides})


def report_of(ref: Ref, **fields: Any) -> Report:
    """A REPORT for the task ``ref``: its ids from the ref, every other field named by the caller."""
    return Report(session=ref.session, task=ref.task, **fields)

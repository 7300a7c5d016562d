"""A server's implementation dispatch reads no task that did not change since its last one."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest

from bench.dispatch import inotify_watches
from bench.requests import implementation
from handoff_core.contract.scope import Scope
from server.config import Settings
from server.mcp.services import Services
from tests.support.clock import past_this_tick

TASKS = 30


def counted(monkeypatch: pytest.MonkeyPatch, calls: list[str]) -> None:
    """Count every stat, open and listdir made through ``os`` (the claim scan's every look at a file)."""
    for name in ("stat", "open", "listdir", "scandir"):
        real = getattr(os, name)

        def counting(*args: Any, _real: Callable[..., Any] = real, _name: str = name, **kwargs: Any) -> Any:
            calls.append(_name)
            return _real(*args, **kwargs)

        monkeypatch.setattr(os, name, counting)


def released(services: Services, count: int) -> None:
    store = services.store
    for _ in range(count):
        number = len(store.queries.status())
        scope = Scope(workspace="required", writable=(f"src/p{number}/**",))
        ref = store.create_task(implementation(f"impl-{number}", scope=scope, writer_limit=99)).ref
        store.release_writer(ref, "none", "never started")


def looks_of_a_warm_scan(services: Services, monkeypatch: pytest.MonkeyPatch) -> int:
    past_this_tick()
    assert services.store.queries.claims() == []  # judges what is new
    calls: list[str] = []
    with monkeypatch.context() as patched:
        counted(patched, calls)
        assert services.store.queries.claims() == []
    return len(calls)


def test_a_server_answers_claims_without_looking_at_each_unchanged_task(
    settings_for: Callable[[str], Settings], monkeypatch: pytest.MonkeyPatch
) -> None:
    services = Services(settings_for("lead"))
    services.store.queries.keep_claim_rows(settle_ns=0)  # a round is trusted from the next clock tick
    released(services, TASKS)
    few = looks_of_a_warm_scan(services, monkeypatch)
    released(services, TASKS)
    assert looks_of_a_warm_scan(services, monkeypatch) == few  # one look per change and round, none per task


def test_a_servers_claims_hold_no_kernel_watch_per_task(settings_for: Callable[[str], Settings]) -> None:
    before = inotify_watches()
    services = Services(settings_for("lead"))
    released(services, TASKS)
    assert services.store.queries.claims() == []
    assert inotify_watches() == before  # none for its tasks, rounds or changes

"""The disk cache: a fresh process starts from it, and nothing about it can change an answer."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from handoff_core.contract.ids import Ref
from handoff_core.contract.proof import PROOFS
from handoff_core.contract.scope import Scope, SharedPath
from handoff_core.errors import OwnershipConflict
from handoff_core.files.cache_file import KEY_FILE
from handoff_core.layout import KINDS, TASK_STATES
from handoff_core.services.rules.ownership import Claim
from handoff_core.services.tree.disk_cache import (
    DiskCache,
    Section,
    decode_body,
    decode_claim,
    encode_body,
    encode_claim,
)
from handoff_core.services.tree.queries import Queries
from handoff_core.services.tree.status import TaskStatus
from handoff_core.services.tree.verdicts import Verdicts
from handoff_core.services.writing.store import Store
from tests.conftest import CHANGE, implementation, report_of, review

FOCUS = "Read it. Found two issues. Stopped. Next: fix."


def fresh(store: Store, cache_dir: Path) -> Queries:
    """A reader as a new process would make it: empty memory, the cache on disk, verdicts settled at once."""
    return Queries(store.roots, Verdicts(settle_seconds=0), DiskCache(cache_dir, store.roots.state_root))


def returned(store: Store, topic: str = "review-a1") -> Ref:
    ref = store.create_task(review(topic)).ref
    store.write_report(
        report_of(ref, status="completed", focused=FOCUS, artifacts="none", verification="ok"),
        CHANGE,
    )
    return ref


@pytest.fixture
def cache_dir(tmp_path: Path) -> Path:
    return tmp_path / "cache"


@pytest.fixture
def kept(store: Store, cache_dir: Path) -> Queries:
    """A tree of three tasks whose verdicts one process has judged and saved."""
    returned(store)
    returned(store, "review-a2")
    store.create_task(implementation())
    first = fresh(store, cache_dir)
    first.status()
    assert first.save_cache(force=True)
    return first


def test_a_fresh_process_holds_every_saved_verdict_and_judges_nothing_again(
    store: Store, cache_dir: Path, kept: Queries
) -> None:
    second = fresh(store, cache_dir)
    assert second.status() == kept.status() == store.queries.status()
    assert second.held_verdicts == 3
    assert second.unsaved == 0


def test_a_deleted_cache_changes_no_answer(store: Store, cache_dir: Path, kept: Queries) -> None:
    cache_file(store, cache_dir).unlink()
    assert_judged_afresh(store, cache_dir, kept)


def test_a_report_changed_after_the_save_is_judged_again_by_the_next_process(
    store: Store, cache_dir: Path, kept: Queries
) -> None:
    report = store.roots.task_dir(kept.status()[0].ref) / "REPORT.md"
    report.chmod(0o644)
    report.write_text(report.read_text().replace("completed", "blocked", 1))
    assert [t.label for t in fresh(store, cache_dir).status()] == [
        "returned:blocked",
        "returned:completed",
        "dispatched",
    ]


@pytest.mark.parametrize(
    "damage",
    [
        b"",
        b"{not json",
        b"[]",
        b'{"format": 1}',
        b"\xff\xfe",
    ],
)
def test_a_damaged_cache_is_not_used(store: Store, cache_dir: Path, kept: Queries, damage: bytes) -> None:
    path = cache_file(store, cache_dir)
    path.write_bytes(signed(path, damage))
    second = fresh(store, cache_dir)
    assert second.status() == kept.status()
    assert second.held_verdicts == 3
    assert second.unsaved == 3


def assert_judged_afresh(store: Store, cache_dir: Path, kept: Queries) -> None:
    """A fresh process gives the same answers, and had to judge all three tasks to give them."""
    second = fresh(store, cache_dir)
    assert second.status() == kept.status()
    assert second.unsaved == 3


def cache_file(store: Store, cache_dir: Path, section: Section = "verdicts") -> Path:
    return DiskCache(cache_dir, store.roots.state_root).path(section)


def ageless(claims: list[Claim]) -> list[Claim]:
    return [replace(claim, age_seconds=0) for claim in claims]


def signed(path: Path, data: bytes, key_file: Path | None = None) -> bytes:
    """``data`` as this user's server signs a cache file (HMAC-SHA256 of its name and bytes)."""
    key = (key_file or path.parent / KEY_FILE).read_bytes()
    mac = hmac.new(key, path.name.encode() + b"\0" + data, hashlib.sha256).hexdigest()
    return b"hmac-sha256:" + mac.encode() + b"\n" + data


def _split(path: Path) -> tuple[bytes, bytes]:
    """The MAC line (with its newline) and the JSON after it."""
    raw = path.read_bytes()
    head, _, data = raw.partition(b"\n") if raw.startswith(b"hmac-sha256:") else (b"", b"", raw)
    return (head + b"\n" if head else b""), data


def body(path: Path) -> bytes:
    return _split(path)[1]


def rewrite(path: Path, change: Callable[[Any], object], *, sign: bool = True) -> None:
    """Edit the cache's JSON; signed again with the user's key, it tests the checks behind the MAC."""
    payload = json.loads(body(path))
    change(payload)
    data = json.dumps(payload).encode()
    path.write_bytes(signed(path, data) if sign else _split(path)[0] + data)


@pytest.mark.parametrize(
    "change",
    [
        lambda p: p.update(code="0" * 64),  # written by other code
        lambda p: p.update(root="/elsewhere"),  # for another state root
        lambda p: p.update(format=0),
        lambda p: p["rows"]["rows"][0].pop(),  # a row cut short
        lambda p: p["rows"]["rows"][1].__setitem__(5, "not a body"),
        lambda p: p["rows"]["bodies"][0].__setitem__(1, "no such state"),
    ],
)
def test_a_cache_from_other_code_or_with_malformed_rows_is_not_used(
    store: Store, cache_dir: Path, kept: Queries, change: Callable[[Any], object]
) -> None:
    path = cache_file(store, cache_dir)
    rewrite(path, change)
    assert_judged_afresh(store, cache_dir, kept)


def test_a_forged_verdict_is_not_used_once_the_file_it_names_is_not_the_one_judged(
    store: Store, cache_dir: Path, kept: Queries
) -> None:
    """A verdict counts only for the exact probe it was kept with: change one number and it is judged again."""
    path = cache_file(store, cache_dir)

    def forge(payload: dict[str, Any]) -> None:
        payload["rows"]["bodies"].append(["review", "invalid", None, None, False, [], ["forged"], False, []])
        for row in payload["rows"]["rows"]:
            row[5] = len(payload["rows"]["bodies"]) - 1  # the state the forger wants shown...
            row[3] = "0" * 32  # ...for a probe the files do not give

    rewrite(path, forge)
    assert_judged_afresh(store, cache_dir, kept)


def test_a_symlinked_cache_is_not_followed(store: Store, cache_dir: Path, kept: Queries, tmp_path: Path) -> None:
    path = cache_file(store, cache_dir)
    target = tmp_path / "elsewhere.json"
    path.rename(target)
    path.symlink_to(target)
    assert_judged_afresh(store, cache_dir, kept)


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_a_cache_owned_by_another_user_is_not_used(store: Store, cache_dir: Path, kept: Queries) -> None:
    os.chown(cache_file(store, cache_dir), 65534, 65534)
    assert_judged_afresh(store, cache_dir, kept)


def test_a_cache_that_cannot_be_written_changes_no_answer(store: Store, tmp_path: Path) -> None:
    returned(store)
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    reader = fresh(store, blocked / "cache")  # its directory cannot be made under a file
    assert reader.status() == store.queries.status()
    assert reader.save_cache(force=True) is False
    assert not list(tmp_path.glob("**/*.tmp"))


def test_the_cache_is_private_to_its_user(store: Store, cache_dir: Path, kept: Queries) -> None:
    assert cache_file(store, cache_dir).stat().st_mode & 0o777 == 0o600


def test_a_fresh_process_restores_claims_and_still_sees_a_report_removed_by_hand(store: Store, cache_dir: Path) -> None:
    done = store.create_task(
        implementation("implement-a2", scope=Scope(workspace="current", writable=("src/a2/**",)))
    ).ref
    store.write_report(
        report_of(done, status="completed", focused=FOCUS, artifacts="none", verification="ok"),
        CHANGE,
    )
    store.create_task(implementation())
    for path in store.roots.state_root.rglob("*.md"):
        os.utime(path, ns=(1_000_000_000, 1_000_000_000))  # long settled
    first = fresh(store, cache_dir)
    assert [str(c.ref) for c in first.claims()] == [str(store.queries.claims()[0].ref)]
    assert first.save_cache(force=True)
    second = fresh(store, cache_dir)
    assert ageless(second.claims()) == ageless(first.claims())
    assert second.unsaved == 0
    (store.roots.task_dir(done) / "REPORT.md").unlink()
    assert {c.ref for c in fresh(store, cache_dir).claims()} == {c.ref for c in store.queries.claims()}
    assert done in {c.ref for c in store.queries.claims()}


def test_a_malformed_claim_row_leaves_claims_to_be_read_from_the_files(store: Store, cache_dir: Path) -> None:
    store.create_task(implementation())
    for path in store.roots.state_root.rglob("*.md"):
        os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    first = fresh(store, cache_dir)
    first.claims()
    assert first.save_cache(force=True)
    rewrite(cache_file(store, cache_dir, "claims"), lambda p: p["rows"].append(["x"]))
    second = fresh(store, cache_dir)
    assert ageless(second.claims()) == ageless(first.claims())
    assert second.unsaved == 1


def test_saves_wait_until_enough_is_new(store: Store, cache_dir: Path) -> None:
    returned(store)
    reader = fresh(store, cache_dir)
    reader.status()
    assert not cache_file(store, cache_dir).exists()
    assert reader.save_cache(force=True)
    assert reader.save_cache(force=True) is False  # nothing new since


names = st.text(st.characters(codec="utf-8"), max_size=8)
scopes = st.none() | st.builds(
    Scope,
    workspace=st.sampled_from(["current", "required", None]),
    writable=st.tuples(names),
    read_only=st.tuples(names),
    shared=st.tuples(st.builds(SharedPath, names, names)),
    artifacts=st.tuples(names),
    notes=names,
    resources=st.tuples(names),
    worktree=names,
    branch=names,
    base=names,
    dirty=st.tuples(names),
)
times = st.floats(min_value=0, max_value=2e9, allow_nan=False)
statuses = st.builds(
    TaskStatus,
    ref=st.builds(Ref, names, names, names),
    kind=st.sampled_from([*KINDS, None]),
    state=st.sampled_from(TASK_STATES),
    report_status=st.none() | names,
    scope=scopes,
    has_locator=st.booleans(),
    temp_files=st.tuples(names),
    problems=st.tuples(names, names),
    outstanding=st.booleans(),
    notes=st.tuples(names),
    proof=st.sampled_from([*PROOFS, None]),
    dispatched_at=times,
    released_at=st.none() | times,
    closed_at=st.none() | times,
)


@given(statuses)
def test_a_status_survives_the_round_trip_through_json(status: TaskStatus) -> None:
    body = decode_body(json.loads(json.dumps(encode_body(status))))
    times = {"dispatched_at": status.dispatched_at, "released_at": status.released_at, "closed_at": status.closed_at}
    assert TaskStatus(**{"ref": status.ref, **body, **times}) == status


@given(st.builds(Ref, names, names, names), st.tuples(names), st.tuples(st.tuples(names, names)), st.booleans())
def test_a_claim_survives_the_round_trip_through_json(
    ref: Ref, writable: tuple[str, ...], shared: tuple[tuple[str, str], ...], unreadable: bool
) -> None:
    claim = Claim(
        ref=ref,
        workspace="current",
        writable=writable,
        shared=shared,
        age_seconds=0.0,
        unreadable=unreadable,
        resources=("port:5432",),
    )
    assert decode_claim(ref, json.loads(json.dumps(encode_claim(claim)))) == claim


def test_a_save_while_another_walk_holds_new_verdicts_does_not_fail(
    store: Store, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server answers status from several threads: one may hold a verdict while another saves."""
    returned(store)
    reader = fresh(store, cache_dir)
    reader.status()
    store.create_task(review("review-a2"))
    import handoff_core.services.tree.verdicts as verdicts_module

    walked: list[list[TaskStatus]] = []

    def encode_while_another_walk_runs(status: TaskStatus) -> list[Any]:
        if not walked:
            walked.append(reader.status())  # holds the new task's verdict mid-save
        return encode_body(status)

    monkeypatch.setattr(verdicts_module, "encode_body", encode_while_another_walk_runs)
    assert reader.save_cache(force=True)
    assert len(walked[0]) == 2


def _claims_saved(store: Store, cache_dir: Path) -> Path:
    """One outstanding writer, settled, whose claim a first process judged and kept on disk."""
    store.create_task(implementation())
    for path in store.roots.state_root.rglob("*.md"):
        os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    first = fresh(store, cache_dir)
    assert len(first.claims()) == 1
    assert first.save_cache(force=True)
    return cache_file(store, cache_dir, "claims")


def _drop_claims(payload: dict[str, list[list[object]]]) -> None:
    for row in payload["rows"]:
        row[9] = None  # the claim gone, the stamps it was judged from kept


def _second_writer(store: Store, cache_dir: Path) -> None:
    server = Store(store.roots.state_root, store.roots.project_root, cache_dir=cache_dir)
    with pytest.raises(OwnershipConflict):
        server.create_task(implementation("second-writer", goal="Another change to src/a1."))


def test_claim_rows_edited_to_drop_a_claim_admit_no_second_writer(store: Store, cache_dir: Path) -> None:
    rewrite(_claims_saved(store, cache_dir), _drop_claims, sign=False)
    _second_writer(store, cache_dir)


def test_claim_rows_signed_with_another_key_admit_no_second_writer(
    store: Store, cache_dir: Path, tmp_path: Path
) -> None:
    path = _claims_saved(store, cache_dir)
    other_key = tmp_path / "other.key"
    other_key.write_bytes(os.urandom(32))
    payload = json.loads(body(path))
    _drop_claims(payload)
    path.write_bytes(signed(path, json.dumps(payload).encode(), other_key))
    _second_writer(store, cache_dir)


@pytest.mark.parametrize("target", ["file", "directory", "key"])
def test_a_cache_others_could_write_is_ignored_with_a_warning(
    store: Store, cache_dir: Path, kept: Queries, target: str, caplog: pytest.LogCaptureFixture
) -> None:
    path = cache_file(store, cache_dir)
    {"file": path, "directory": cache_dir, "key": cache_dir / KEY_FILE}[target].chmod(
        {"file": 0o666, "directory": 0o777, "key": 0o644}[target]
    )
    with caplog.at_level(logging.WARNING, logger="handoff_core.cache"):
        assert_judged_afresh(store, cache_dir, kept)
    assert any("not used" in record.getMessage() for record in caplog.records)


def test_the_cache_key_is_private_and_kept_across_saves(store: Store, cache_dir: Path, kept: Queries) -> None:
    key = cache_dir / KEY_FILE
    assert key.stat().st_mode & 0o777 == 0o600
    before = key.read_bytes()
    returned(store, "review-a3")
    reader = fresh(store, cache_dir)
    reader.status()
    assert reader.save_cache(force=True)
    assert key.read_bytes() == before

"""A REPORT proven by the key pair its report token seeds, verified from the files alone."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from bench.requests import implementation, report_of, review
from handoff_core.contract.ids import Ref
from handoff_core.contract.proof import PROOF_INVALID, proof_of, signing_key
from handoff_core.contract.report import Report
from handoff_core.errors import QuotedTokenCheck
from handoff_core.layout import REPORT_FILE, TASK_FILE
from handoff_core.services.capabilities.tokens import token_check
from handoff_core.services.tree.queries import Queries
from handoff_core.services.tree.report_view import read_handoff
from handoff_core.services.writing.store import Store

FOCUS = "Done: A1 works. Decided: kept the API. Stopped after tests. Next: review."
TOKEN = "token-of-the-task-aaaaaaaaaaaaaaa"


def signed_task(store: Store, token: str = TOKEN, kind: str = "implementation") -> Ref:
    base = implementation() if kind == "implementation" else review()
    request = replace(base, token_check=lambda ref: token_check(token), signing_key=lambda ref: signing_key(token))
    return store.create_task(request).ref


def report(ref: Ref) -> Report:
    return report_of(ref, status="completed", focused=FOCUS, artifacts="src/a1/x.py", verification="pytest: exit 0")


def files(store: Store, ref: Ref) -> tuple[bytes, bytes]:
    task_dir = store.roots.task_dir(ref)
    return (task_dir / TASK_FILE).read_bytes(), (task_dir / REPORT_FILE).read_bytes()


def rewrite(path: Path, data: bytes) -> None:
    os.chmod(path, 0o644)
    path.unlink()
    path.write_bytes(data)


def test_the_task_records_the_public_key_its_token_seeds_beside_the_token_check(store: Store) -> None:
    ref = signed_task(store)
    task = (store.roots.task_dir(ref) / TASK_FILE).read_text()
    assert f"- Report signing key: `{signing_key(TOKEN)}`" in task
    assert store.queries.read_task(ref)[0].signing_key == signing_key(TOKEN)
    assert signing_key(TOKEN) == signing_key(f" {TOKEN}\n")  # the token as checked: stripped
    assert signing_key(TOKEN) != signing_key(TOKEN + "x")


def test_a_report_published_with_the_token_is_valid_everywhere(store: Store) -> None:
    ref = signed_task(store)
    store.write_report(report(ref), ref.change, token=TOKEN)
    task, data = files(store, ref)
    assert data.count(b"\nSignature: ed25519:") == 1
    assert proof_of(task, data) == "valid"
    fresh = Queries(store.roots)  # another server: no secret, no token, only the files
    assert fresh.validate(ref, "return").proof == "valid"
    assert fresh.validate(ref, "return").errors == ()
    assert read_handoff(fresh, ref).proof == "valid"
    assert [t.proof for t in fresh.status(ref.change)] == ["valid"]


def test_a_captured_reply_is_signed_by_the_lead_holding_the_token(store: Store) -> None:
    ref = signed_task(store)
    store.capture_report(ref, "completed", "/logs/x.jsonl", "all done", token=TOKEN)
    assert proof_of(*files(store, ref)) == "valid"


def test_a_hand_written_report_is_absent_and_stays_valid(store: Store) -> None:
    ref = signed_task(store)
    store.write_report(report(ref), ref.change)  # published with no token: as if written by hand
    assert proof_of(*files(store, ref)) == "absent"
    verdict = store.queries.validate(ref, "return")
    assert verdict.errors == ()
    assert verdict.proof == "absent"
    assert store.queries.status(ref.change)[0].proof == "absent"


def test_a_report_edited_after_publishing_is_invalid_but_still_ends_the_claim(store: Store) -> None:
    ref = signed_task(store)
    stored = store.write_report(report(ref), ref.change, token=TOKEN)
    rewrite(stored.path, stored.path.read_bytes().replace(b"pytest: exit 0", b"pytest: exit 1"))
    fresh = Queries(store.roots)
    verdict = fresh.validate(ref, "return")
    assert verdict.proof == "invalid"
    assert PROOF_INVALID in verdict.errors
    status = fresh.status(ref.change)[0]
    assert (status.proof, status.state, status.outstanding) == ("invalid", "returned", False)
    assert read_handoff(fresh, ref).proof == "invalid"


def test_a_report_signed_by_another_key_is_invalid(store: Store) -> None:
    ref = signed_task(store)
    other = signed_task(store, token="another-token-bbbbbbbbbbbbbbbbbbb", kind="review")
    stored = store.write_report(report(other), other.change, token="another-token-bbbbbbbbbbbbbbbbbbb")
    foreign = stored.path.read_bytes().replace(other.task.encode(), ref.task.encode())
    (store.roots.task_dir(ref) / REPORT_FILE).write_bytes(foreign)
    assert proof_of((store.roots.task_dir(ref) / TASK_FILE).read_bytes(), foreign) == "invalid"
    assert Queries(store.roots).validate(ref, "return").proof == "invalid"


def test_a_report_with_a_wrong_token_is_signed_by_a_key_its_task_does_not_record(store: Store) -> None:
    ref = signed_task(store)
    store.write_report(report(ref), ref.change, token="not-this-tasks-token-ccccccccccc")
    assert proof_of(*files(store, ref)) == "invalid"


def test_a_mangled_signature_line_is_invalid_not_a_crash(store: Store) -> None:
    ref = signed_task(store)
    stored = store.write_report(report(ref), ref.change, token=TOKEN)
    task, data = files(store, ref)
    for mangled in (b"Signature: ed25519:AAAA", b"Signature: rsa:xyz", b"Signature: "):
        lines = [mangled if line.startswith(b"Signature: ") else line for line in data.split(b"\n")]
        assert proof_of(task, b"\n".join(lines)) == "invalid"
    assert stored.created


def test_a_task_text_quoting_a_signing_key_line_is_refused_at_dispatch(store: Store) -> None:
    quoted = f"See the other task.\n- Report signing key: `{signing_key('another')}`"
    with pytest.raises(QuotedTokenCheck):
        store.create_task(replace(implementation(), body=implementation().body._replace(inputs=quoted)))


def test_a_task_holding_two_key_lines_proves_nothing(store: Store) -> None:
    ref = signed_task(store)
    store.write_report(report(ref), ref.change, token=TOKEN)
    task, data = files(store, ref)
    forged = task.replace(b"## Goal\n", b"## Goal\n- Report signing key: `" + signing_key("x").encode() + b"`\n", 1)
    assert proof_of(forged, data) == "invalid"

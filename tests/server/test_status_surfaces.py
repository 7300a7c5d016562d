"""One status, four surfaces: MCP ``handoff_status``, ``handoff-mcp status`` and its ``--json``, and the
board show the same facts of one tree, built once in the core (``services.views.status_view``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from mcp import Client

from bench.requests import implementation, report_of, review
from handoff_core.contract.ids import Ref
from handoff_core.contract.proof import signing_key
from handoff_core.contract.scope import Scope
from handoff_core.services.capabilities.tokens import load_secret, report_token
from handoff_core.services.evidence.verifications import Recorded, record_verification
from handoff_core.services.writing.store import Store
from server.cli import main
from server.config import Role, Settings
from server.mcp.services import open_store
from server.web.board_model import BoardModel
from tests.support.calls import call
from tests.support.changes import CHANGE
from tests.support.gitrepo import FOCUS
from tests.support.surfaces import audited_and_failed

pytestmark = pytest.mark.anyio
FACTS = ("state", "claim", "proof", "audit", "verification", "problems", "attention")


def token_of(store: Store, secret_file: Path) -> Callable[[Ref], str]:
    """Each task's report token as the Lead's server derives it: the anchor checks its signing key too."""
    secret = load_secret(secret_file)
    return lambda ref: report_token(secret, store.roots.state_root, ref)


def troubled_tree(store: Store, token: Callable[[Ref], str]) -> dict[str, str]:
    """A tree with each kind of trouble a summary must show, and a task in good order; ref -> what it is."""
    failed = audited_and_failed(store, token)
    proven = replace(review("review-edited"), signing_key=lambda ref: signing_key(token(ref)))
    edited = store.create_task(proven).ref
    report = report_of(edited, status="completed", focused=FOCUS, artifacts="notes", verification="read")
    path = store.write_report(report, edited.change, token=token(edited)).path
    text = path.read_text().replace("notes", "other notes")
    path.chmod(0o644)
    path.unlink()
    path.write_text(text)  # edited after publishing: its proof no longer verifies
    good = store.create_task(replace(review("review-good"), signing_key=lambda ref: signing_key(token(ref)))).ref
    report = report_of(good, status="completed", focused=FOCUS, artifacts="notes", verification="read")
    store.write_report(report, good.change, token=token(good))
    verified(store, good, "passed", "every check (1) passed on replay")
    false_green = store.create_task(
        replace(review("review-false"), signing_key=lambda ref: signing_key(token(ref)))
    ).ref
    report = report_of(false_green, status="completed", focused=FOCUS, artifacts="notes", verification="all passed")
    store.write_report(report, false_green.change, token=token(false_green))
    verified(store, false_green, "failed", "1 of 1 check(s) failed on replay: check 1 `pytest` exited 1")
    broken = store.create_task(review("review-broken")).ref
    task = store.roots.task_dir(broken) / "TASK.md"
    task.chmod(0o644)
    task.unlink()
    task.write_text("not a TASK\n")
    kinds = {str(failed): "audit", str(edited): "proof", str(good): "good", str(broken): "unreadable"}
    return kinds | {str(false_green): "verification"}


def verified(store: Store, ref: Ref, verdict: str, why: str) -> None:
    """``ref``'s last verification as verify_task keeps it, for the REPORT there now."""
    mtime = (store.roots.task_dir(ref) / "REPORT.md").stat().st_mtime
    assert record_verification(str(store.roots.state_root), str(ref), Recorded(verdict, why, 1.0), mtime)


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(list(args)) == 0
    return capsys.readouterr().out


async def test_one_tree_shows_the_same_facts_on_all_four_surfaces(
    settings_for: Callable[[Role], Settings],
    secret_file: Path,
    project: Path,
    lead: Client,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = open_store(settings_for("lead"))  # the Lead's store: its TASKs anchored under the Lead's secret
    monkeypatch.setenv("HANDOFF_SECRET_FILE", str(secret_file))  # the CLI judges them by the same secret
    kinds = troubled_tree(store, token_of(store, secret_file))
    mcp = {t["ref"]: t for t in (await call(lead, "handoff_status", change=CHANGE, view="all"))["tasks"]}
    as_json = json.loads(cli(capsys, "status", "--json", "--project-root", str(project)))
    scripted = {t["ref"]: t for t in as_json["tasks"]}
    model = BoardModel(store.queries, 3)
    model.load()
    board = {t["ref"]: t for t in model.page(CHANGE, 0)["tasks"]}
    summary = model.summary()
    table = cli(capsys, "status", "--project-root", str(project))
    assert set(mcp) == set(scripted) == set(board) == set(kinds)
    for ref in kinds:
        shown = [
            {fact: (list(row[fact]) if fact == "problems" else row[fact]) for fact in FACTS}
            for row in (mcp[ref], scripted[ref], board[ref])
        ]
        assert shown[0] == shown[1] == shown[2], ref
    attention = {ref: mcp[ref]["attention"] for ref in kinds}
    by_kind = {kinds[ref]: reason for ref, reason in attention.items()}
    assert by_kind["good"] == ""
    assert by_kind["audit"].startswith("audit failed")
    assert by_kind["proof"].startswith("REPORT proof invalid")
    assert by_kind["unreadable"].startswith("invalid:")
    assert by_kind["verification"] == "verification failed: 1 of 1 check(s) failed on replay: check 1 `pytest` exited 1"
    good_ref = next(ref for ref, kind in kinds.items() if kind == "good")
    assert mcp[good_ref]["verification"] == "passed"
    audit_ref = next(ref for ref, kind in kinds.items() if kind == "audit")
    assert (mcp[audit_ref]["state"], mcp[audit_ref]["proof"], mcp[audit_ref]["audit"]) == (
        "returned:completed",
        "valid",
        "failed",
    )
    assert as_json["needs_attention"] == summary["attention"] == summary["changes"][0]["attention"] == 4
    assert "needs attention: 4 task(s)" in table
    for ref, reason in attention.items():
        assert (f"⚠ {ref}: {reason}" in table) == bool(reason), ref


async def test_a_task_the_lead_let_run_without_the_sandbox_says_so_on_every_surface(
    settings_for: Callable[[Role], Settings],
    secret_file: Path,
    project: Path,
    lead: Client,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = open_store(settings_for("lead"))
    monkeypatch.setenv("HANDOFF_SECRET_FILE", str(secret_file))
    scope = Scope(workspace="current", writable=("src/a1/**",), sandbox="if-available")
    ref = str(store.create_task(implementation(scope=scope)).ref)
    said = "sandbox: if-available"
    monkeypatch.setenv("COLUMNS", "400")  # the table's cells unwrapped
    (row,) = (await call(lead, "handoff_status", change=CHANGE, view="all"))["tasks"]
    assert (row["ref"], row["claim"].split("; ")[-1]) == (ref, said)
    (scripted,) = json.loads(cli(capsys, "status", "--json", "--project-root", str(project)))["tasks"]
    model = BoardModel(store.queries, 3)
    model.load()
    (board,) = model.page(CHANGE, 0)["tasks"]
    assert scripted["link"] == board["link"] == said
    assert said in cli(capsys, "status", "--project-root", str(project))


async def test_a_blocked_return_shows_its_reports_blocker_as_plain_text_on_every_surface(
    settings_for: Callable[[Role], Settings],
    project: Path,
    lead: Client,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = open_store(settings_for("lead"))
    ref = store.create_task(review()).ref
    blocker = "Needs the <b>staging</b> key [bold]now[/bold]\nfrom ops; " + "x" * 2000
    report = report_of(ref, status="blocked", focused=FOCUS, artifacts="none", verification="none", problems=blocker)
    store.write_report(report, ref.change)
    monkeypatch.setenv("COLUMNS", "400")
    (row,) = (await call(lead, "handoff_status", change=CHANGE, view="all"))["tasks"]
    (scripted,) = json.loads(cli(capsys, "status", "--json", "--project-root", str(project)))["tasks"]
    model = BoardModel(store.queries, 3)
    model.load()
    (board,) = model.page(CHANGE, 0)["tasks"]
    shown = "REPORT blocked: Needs the <b>staging</b> key [bold]now[/bold] from ops; xxx"
    for surface in (row, scripted, board):
        (said,) = [p for p in surface["problems"] if p.startswith("REPORT blocked: ")]
        assert said.startswith(shown), surface
        assert said.endswith("…"), said  # bounded: the rest is in the REPORT
        assert len(said) < 400, said
    assert row["problems"] == scripted["problems"] == board["problems"]
    table = cli(capsys, "status", "--project-root", str(project))
    assert "[bold]now[/bold]" in table  # written as text: rich markup in a REPORT is not applied

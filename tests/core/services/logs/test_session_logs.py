from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
import zstandard

from bench.requests import implementation
from handoff_core.contract.ids import Ref
from handoff_core.errors import InvalidInput, InvalidLocator
from handoff_core.services.logs import log_search
from handoff_core.services.logs import session_logs as sessionlog
from handoff_core.services.tree.report_view import log_path
from handoff_core.services.writing.store import Store
from tests.support.logs import CLAUDE_ID, CODEX_ID, claude_log, claude_records, codex_log, write_jsonl


@pytest.fixture
def ref(store: Store) -> Ref:
    return store.create_task(implementation()).ref


def test_a_matching_claude_code_log_is_confirmed_and_recorded(store: Store, ref: Ref, tmp_path: Path) -> None:
    log = claude_log(tmp_path / "home", str(ref))
    stored = store.record_session_locator(ref, str(log))
    assert stored.created
    assert str(log) in (store.roots.task_dir(ref) / "session-locator.json").read_text()


def test_a_matching_codex_log_is_confirmed(store: Store, ref: Ref, tmp_path: Path) -> None:
    log = codex_log(tmp_path / "home", f"{ref.session}/{ref.task}")
    facts = sessionlog.inspect(str(log), [str(ref), f"{ref.session}/{ref.task}"])
    assert (facts.tool, facts.name_id, facts.record_id, facts.mentions_task) == ("codex", CODEX_ID, CODEX_ID, True)
    assert store.record_session_locator(ref, str(log)).created


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (
            lambda home, ref: claude_log(home, str(ref), record_id="ffffffff-0000-0000-0000-000000000000"),
            "records carry",
        ),
        (
            lambda home, ref: codex_log(home, str(ref), record_id="ffffffff-0000-0000-0000-000000000000"),
            "records carry",
        ),
        (lambda home, ref: claude_log(home, "some other task"), "never mentions"),
        (lambda home, ref: write_jsonl(home / "notes.jsonl", claude_records(CLAUDE_ID, str(ref))), "file name"),
    ],
)
def test_a_log_that_is_not_this_tasks_is_refused_with_the_reason(
    store: Store, ref: Ref, tmp_path: Path, make: Callable[[Path, Ref], Path], reason: str
) -> None:
    log = make(tmp_path / "home", ref)
    with pytest.raises(InvalidLocator) as caught:
        store.record_session_locator(ref, str(log))
    assert reason in caught.value.message
    assert not (store.roots.task_dir(ref) / "session-locator.json").exists()


def test_a_fifo_is_refused_without_blocking(store: Store, ref: Ref, tmp_path: Path) -> None:
    fifo = tmp_path / f"{CLAUDE_ID}.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(InvalidLocator) as caught:
        store.record_session_locator(ref, str(fifo))
    assert "not a regular file" in caught.value.message


def test_a_symlink_a_directory_and_a_relative_path_are_refused(store: Store, ref: Ref, tmp_path: Path) -> None:
    log = claude_log(tmp_path / "home", str(ref))
    link = tmp_path / f"{CLAUDE_ID}.jsonl"
    link.symlink_to(log)
    folder = tmp_path / "dir" / f"{CLAUDE_ID}.jsonl"
    folder.mkdir(parents=True)
    for path in (str(link), str(folder), f"home/.claude/projects/x/{CLAUDE_ID}.jsonl"):
        with pytest.raises(InvalidLocator):
            store.record_session_locator(ref, path)
    assert not (store.roots.task_dir(ref) / "session-locator.json").exists()


def test_verify_false_records_a_path_confirmed_elsewhere_but_never_a_placeholder(store: Store, ref: Ref) -> None:
    assert store.record_session_locator(ref, "/remote/host/logs/run.jsonl", verify=False).created
    with pytest.raises(InvalidLocator):
        store.record_session_locator(ref, "/home/unknown/x.jsonl", verify=False)


def test_logs_are_found_by_exact_id_only(tmp_path: Path) -> None:
    home = tmp_path / "home"
    claude_log(home, "x")
    claude_log(home, "x", session_id="11111111-2222-3333-4444-555555555555")
    codex_log(home, "x")
    assert sessionlog.candidates("claude-code", CLAUDE_ID, home, {}) == [
        str(home / ".claude/projects/-home-me-project" / f"{CLAUDE_ID}.jsonl")
    ]
    assert len(sessionlog.candidates("codex", CODEX_ID, home, {})) == 1
    assert sessionlog.candidates("codex", CODEX_ID, tmp_path / "nobody", {}) == []
    relocated = tmp_path / "elsewhere"
    claude_log(relocated.parent / "relocated-home", "x")
    env = {"CLAUDE_CONFIG_DIR": str(relocated.parent / "relocated-home" / ".claude")}
    assert len(sessionlog.candidates("claude-code", CLAUDE_ID, home / "ignored", env)) == 1


@pytest.mark.parametrize("session_id", ["../etc", "a/b", "*", "short"])
def test_a_session_id_that_is_not_a_plain_id_is_refused(tmp_path: Path, session_id: str) -> None:
    with pytest.raises(InvalidInput):
        sessionlog.candidates("codex", session_id, tmp_path, {})


def test_search_returns_bounded_snippets_with_record_facts(tmp_path: Path) -> None:
    log = claude_log(tmp_path, "task-x")
    result = log_search.search(str(log), "migration error", max_hits=5, context_chars=10)
    assert [h.record for h in result.hits] == ["u-2"]
    hit = result.hits[0]
    assert (hit.role, hit.timestamp) == ("user", "2026-11-30T04:51:00.000Z")
    assert "MigrationError" in hit.snippet
    assert len(hit.snippet) <= 2 * 10 + len("migration") + 2
    assert log_search.search(str(log), "migration", max_hits=1).stopped_early


def test_search_reads_codex_records_by_line(tmp_path: Path) -> None:
    log = codex_log(tmp_path, "task-x")
    hit = log_search.search(str(log), "missing column").hits[0]
    assert (hit.record, hit.role) == ("line 3", "assistant")


def test_a_compressed_sibling_is_read_when_the_log_was_compressed(store: Store, ref: Ref, tmp_path: Path) -> None:
    log = claude_log(tmp_path / "home", str(ref))
    store.record_session_locator(ref, str(log))
    Path(f"{log}.zst").write_bytes(zstandard.ZstdCompressor().compress(log.read_bytes()))
    log.unlink()
    path = log_path(store.queries, ref)
    assert path.endswith(".jsonl.zst")
    assert [h.record for h in log_search.search(path, "missing column").hits] == ["u-2"]


def test_a_missing_log_is_said_to_be_missing(store: Store, ref: Ref, tmp_path: Path) -> None:
    from handoff_core.errors import NotFound

    store.record_session_locator(ref, str(tmp_path / "gone.jsonl"), verify=False)
    with pytest.raises(NotFound) as caught:
        log_path(store.queries, ref)
    assert "missing" in caught.value.message


@pytest.mark.parametrize(("query", "hits", "ctx"), [("", 5, 10), ("x", 0, 10), ("x", 21, 10), ("x", 5, 401)])
def test_unbounded_or_empty_searches_are_refused(tmp_path: Path, query: str, hits: int, ctx: int) -> None:
    log = claude_log(tmp_path, "t")
    with pytest.raises(InvalidInput):
        log_search.search(str(log), query, hits, ctx)


def test_an_overlong_line_is_skipped_not_loaded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sessionlog, "MAX_LINE", 64)
    log = tmp_path / f"{CLAUDE_ID}.jsonl"
    log.write_text('{"x": "' + "a" * 500 + '"}\n{"sessionId": "s", "message": {"content": "needle here"}}\n')
    hits = log_search.search(str(log), "needle").hits
    assert [h.line for h in hits] == [2]  # the long line counts as one line, and is never held whole


def test_a_compression_bomb_is_read_only_up_to_the_scan_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(log_search, "MAX_SCAN_BYTES", 1024 * 1024)
    line = b'{"type": "user", "message": {"content": "nothing to see"}}\n'
    bomb = tmp_path / "rollout-2026-11-30-0123abcd-0123-4567-89ab-0123456789ab.jsonl.zst"
    bomb.write_bytes(zstandard.ZstdCompressor().compress(line * 200_000))  # 11 MiB from ~1 KiB
    assert bomb.stat().st_size < 64 * 1024
    result = log_search.search(str(bomb), "needle")
    assert result.stopped_early
    assert result.lines_read < 200_000 // 10


def test_a_search_stops_when_its_time_is_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(log_search, "MAX_SCAN_SECONDS", -1.0)  # already past: the first check stops it
    log = tmp_path / "log.jsonl"
    log.write_bytes(b'{"message": {"content": "x"}}\n' * 5000)
    result = log_search.search(str(log), "needle")
    assert result.stopped_early
    assert result.lines_read == 1024


def test_the_leads_own_log_is_refused_although_it_mentions_the_task(store: Store, ref: Ref, tmp_path: Path) -> None:
    records = claude_records(CLAUDE_ID, "2026-11-30-demo")
    answer = {"ref": str(ref), "report_token": "x" * 24, "dispatch_message": f"You are the executor of {ref}"}
    records.append(
        {
            **records[0],
            "type": "user",
            "uuid": "u-9",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t-9", "content": json.dumps(answer)}],
            },
        }
    )
    log = write_jsonl(tmp_path / "home" / ".claude" / "projects" / "-p" / f"{CLAUDE_ID}.jsonl", records)
    with pytest.raises(InvalidLocator) as caught:
        store.record_session_locator(ref, str(log))
    assert "Lead's own log" in caught.value.message


def test_a_native_subagents_log_is_found_and_confirmed(store: Store, ref: Ref, tmp_path: Path) -> None:
    agent = "a1b2c3d4e5f6"
    records = [{**record, "isSidechain": True, "agentId": agent} for record in claude_records(CLAUDE_ID, str(ref))]
    home = tmp_path / "home"
    log = write_jsonl(home / ".claude" / "projects" / "-p" / CLAUDE_ID / "subagents" / f"agent-{agent}.jsonl", records)
    assert sessionlog.candidates("claude-code", agent, home, {}) == [str(log)]
    facts = sessionlog.inspect(str(log), store.queries.log_needles(ref))
    assert (facts.tool, facts.name_id, facts.record_id, facts.ok) == ("claude-code-subagent", agent, agent, True)
    assert store.record_session_locator(ref, str(log)).created

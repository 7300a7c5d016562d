"""Small, realistic Claude Code and Codex session logs, written by the tests."""

from __future__ import annotations

import json
from pathlib import Path

CLAUDE_ID = "0b1c6f8e-2a4d-4c1e-9f3a-7d5e2b8c1a90"
CODEX_ID = "5f2e9c1a-8b7d-4e3f-a6c2-1d9b0e4f7a35"


def claude_records(session_id: str, mention: str) -> list[dict[str, object]]:
    base = {"sessionId": session_id, "cwd": "/home/me/project", "version": "2.1.0", "gitBranch": "main"}
    return [
        {
            **base,
            "type": "user",
            "uuid": "u-1",
            "timestamp": "2026-11-30T04:50:00.000Z",
            "message": {"role": "user", "content": f"Read the task {mention} and do it."},
        },
        {
            **base,
            "type": "assistant",
            "uuid": "a-1",
            "timestamp": "2026-11-30T04:50:05.000Z",
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Running the migration tests now."},
                    {
                        "type": "tool_use",
                        "id": "t-1",
                        "name": "Bash",
                        "input": {"command": "pytest tests/migrations -q"},
                    },
                ],
            },
        },
        {
            **base,
            "type": "user",
            "uuid": "u-2",
            "timestamp": "2026-11-30T04:51:00.000Z",
            "message": {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t-1",
                        "content": "FAILED test_0042 - MigrationError: column missing",
                    }
                ],
            },
        },
        {
            **base,
            "type": "assistant",
            "uuid": "a-2",
            "timestamp": "2026-11-30T04:52:00.000Z",
            "message": {"role": "assistant", "content": [{"type": "text", "text": "Fixed the migration; 12 passed."}]},
        },
    ]


def codex_records(session_id: str, mention: str) -> list[dict[str, object]]:
    return [
        {
            "timestamp": "2026-11-30T04:50:00.000Z",
            "type": "session_meta",
            "payload": {"id": session_id, "cwd": "/home/me/project", "originator": "codex_cli_rs"},
        },
        {
            "timestamp": "2026-11-30T04:50:01.000Z",
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": f"Task {mention}"}],
            },
        },
        {
            "timestamp": "2026-11-30T04:50:09.000Z",
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "The migration error came from a missing column."}],
            },
        },
    ]


def write_jsonl(path: Path, records: list[dict[str, object]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def claude_log(home: Path, mention: str, session_id: str = CLAUDE_ID, record_id: str | None = None) -> Path:
    path = home / ".claude" / "projects" / "-home-me-project" / f"{session_id}.jsonl"
    return write_jsonl(path, claude_records(record_id or session_id, mention))


def codex_log(home: Path, mention: str, session_id: str = CODEX_ID, record_id: str | None = None) -> Path:
    path = home / ".codex" / "sessions" / "2026" / "11" / "30" / f"rollout-2026-11-30T04-50-00-{session_id}.jsonl"
    return write_jsonl(path, codex_records(record_id or session_id, mention))

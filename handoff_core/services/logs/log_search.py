"""Keyword search of one session log, streaming, a few snippets at a time; never the whole log (SPEC §11)."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from handoff_core.errors import InvalidInput
from handoff_core.services.logs.session_logs import lines, open_log

__all__ = ["MAX_CONTEXT_CHARS", "MAX_HITS", "Hit", "SearchResult", "search"]

# A search stops (stopped_early) after reading this much or running this long: a compressed log
# can expand a thousandfold, and the caller is waiting.
MAX_SCAN_BYTES = 1024 * 1024 * 1024
MAX_SCAN_SECONDS = 15.0
_SKIP_KEYS = frozenset(
    {
        "id",
        "type",
        "role",
        "model",
        "signature",
        "uuid",
        "parentUuid",
        "sessionId",
        "timestamp",
        "cwd",
        "version",
        "gitBranch",
        "call_id",
        "tool_use_id",
        "encrypted_content",
    }
)


@dataclass(frozen=True)
class Hit:
    line: int
    record: str  # the record's uuid (Claude Code) or "line N" (Codex)
    timestamp: str
    role: str
    snippet: str


@dataclass(frozen=True)
class SearchResult:
    path: str
    hits: tuple[Hit, ...]
    lines_read: int
    stopped_early: bool  # max_hits, MAX_SCAN_BYTES or MAX_SCAN_SECONDS reached before the end of the log


def _texts(value: Any, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, list):
        for item in value:
            _texts(item, out)
    elif isinstance(value, dict):
        for key, item in value.items():
            if key not in _SKIP_KEYS:
                _texts(item, out)


def _record(record: dict[str, Any], number: int) -> tuple[str, str, str, str]:
    """(record id, timestamp, role, text) of a Claude Code or Codex record."""
    body = record.get("message") if isinstance(record.get("message"), dict) else record.get("payload")
    body = body if isinstance(body, dict) else {}
    texts: list[str] = []
    _texts(body, texts)
    role = str(body.get("role") or body.get("type") or record.get("type") or "")
    return str(record.get("uuid") or f"line {number}"), str(record.get("timestamp", "")), role, "\n".join(texts)


MAX_HITS, MAX_CONTEXT_CHARS = 20, 400  # a search answer stays a few snippets, never the log


def search(path: str, query: str, max_hits: int = 5, context_chars: int = 200) -> SearchResult:
    """Records whose text holds every keyword of ``query``, as short snippets; never the whole log."""
    keywords = [k for k in query.lower().split() if k][:8]
    if not keywords:
        raise InvalidInput("query needs at least one keyword (e.g. 'migration error')")
    if not (1 <= max_hits <= MAX_HITS and 0 <= context_chars <= MAX_CONTEXT_CHARS):
        raise InvalidInput(f"max_hits must be 1-{MAX_HITS} and context_chars 0-{MAX_CONTEXT_CHARS}")
    ascii_keys = [k.encode() for k in keywords if k.isascii()]
    hits: list[Hit] = []
    number, scanned, deadline = 0, 0, time.monotonic() + MAX_SCAN_SECONDS
    with open_log(path) as stream:
        for number, line in lines(stream):
            scanned += len(line)
            if scanned > MAX_SCAN_BYTES or (number % 1024 == 0 and time.monotonic() > deadline):
                return SearchResult(path, tuple(hits), number, True)
            lowered = line.lower()
            if not all(k in lowered for k in ascii_keys):
                continue
            if (hit := _match(line, number, keywords, context_chars)) is not None:
                hits.append(hit)
                if len(hits) == max_hits:
                    return SearchResult(path, tuple(hits), number, True)
    return SearchResult(path, tuple(hits), number, False)


def _match(line: bytes, number: int, keywords: list[str], context: int) -> Hit | None:
    try:
        record = json.loads(line)
    except ValueError:
        return None
    if not isinstance(record, dict):
        return None
    record_id, timestamp, role, text = _record(record, number)
    lowered = text.lower()
    if not all(k in lowered for k in keywords):
        return None
    at = lowered.index(keywords[0])
    start, end = max(0, at - context), min(len(text), at + len(keywords[0]) + context)
    snippet = ("…" if start else "") + text[start:end] + ("…" if end < len(text) else "")
    return Hit(number, record_id, timestamp, role, snippet)

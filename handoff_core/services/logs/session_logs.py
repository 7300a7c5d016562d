"""Executor session logs (Claude Code, Codex): confirm one before it is recorded, find one by a known
id, and search one by keywords, streaming, a few snippets at a time (SPEC §11).

Nothing here scans caches on its own or picks a file by modification time; a log is only ever
read at a path the caller names or finds by an exact session id.
"""

from __future__ import annotations

import io
import json
import os
import re
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from handoff_core.errors import InvalidInput, InvalidLocator
from handoff_core.layout import LOG_TOOLS

__all__ = ["TOOLS", "Hit", "LogFacts", "SearchResult", "candidates", "inspect", "search", "verify"]

TOOLS = LOG_TOOLS
MAX_LINE = 8 * 1024 * 1024
# A search stops (stopped_early) after reading this much or running this long: a compressed log
# can expand a thousandfold, and the caller is waiting.
MAX_SCAN_BYTES = 1024 * 1024 * 1024
MAX_SCAN_SECONDS = 15.0
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{7,127}\Z")
_CLAUDE_NAME = re.compile(r"^([A-Za-z0-9][A-Za-z0-9_-]{7,127})\.jsonl(?:\.zst)?\Z")
_CODEX_NAME = re.compile(
    r"^rollout-.+-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl(?:\.zst)?\Z"
)
_SESSION_ID = re.compile(rb'"sessionId"\s*:\s*"([^"\\]*)"')
# A Claude Code native subagent's log: <project>/<session>/subagents/agent-<id>.jsonl, records with agentId.
_AGENT_NAME = re.compile(r"^agent-([A-Za-z0-9][A-Za-z0-9_-]{5,127})\.jsonl(?:\.zst)?\Z")
_AGENT_ID = re.compile(rb'"agentId"\s*:\s*"([^"\\]*)"')
# create_task's answer carries the executor's token under this key: a log holding it is the Lead's.
_LEAD_MARK = b"report_token"  # bare: inside a tool result the key's quotes are escaped
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


@dataclass(kw_only=True, frozen=True)
class LogFacts:
    path: str
    tool: str | None
    name_id: str | None  # the session id in the file name
    record_id: str | None  # the session id the records carry
    mentions_task: bool | None  # None: no task was asked about
    problems: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


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


def tool_of(name: str) -> tuple[str | None, str | None]:
    if (match := _CODEX_NAME.match(name)) is not None:
        return "codex", match.group(1)
    if (match := _AGENT_NAME.match(name)) is not None:  # before the plain form, which it also fits
        return "claude-code-subagent", match.group(1)
    if (match := _CLAUDE_NAME.match(name)) is not None:
        return "claude-code", match.group(1)
    return None, None


@contextmanager
def open_log(path: str) -> Iterator[IO[bytes]]:
    """A readable stream of an absolute, regular log file (``.zst`` decompressed); never blocks on a FIFO."""
    if not path.startswith("/"):
        raise InvalidLocator(f"{path!r} is not an absolute POSIX path on this host; give the log's absolute path")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        raise InvalidLocator(
            f"cannot open {path}: {exc.strerror} (symlinks are not followed; give the real path)"
        ) from exc
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise InvalidLocator(f"{path} is not a regular file (a FIFO, device or directory is never a session log)")
    with os.fdopen(fd, "rb") as raw:
        if path.endswith(".zst"):
            import zstandard  # only for compressed logs

            with zstandard.ZstdDecompressor().stream_reader(raw) as reader:
                yield io.BufferedReader(reader)
        else:
            yield raw


def lines(stream: IO[bytes]) -> Iterator[tuple[int, bytes]]:
    """Numbered lines, each at most MAX_LINE bytes (the rest of an overlong line is skipped)."""
    number = 0
    while chunk := stream.readline(MAX_LINE):
        number += 1
        if not chunk.endswith(b"\n") and len(chunk) == MAX_LINE:
            while (rest := stream.readline(MAX_LINE)) and not rest.endswith(b"\n"):
                pass
        yield number, chunk


def inspect(path: str, needles: list[str] | None = None, max_records: int = 200) -> LogFacts:
    """What a log is (tool, session ids) and whether it mentions any of ``needles``."""
    tool, name_id = tool_of(Path(path).name)
    found_needles = [n.encode() for n in needles or []]
    record_id: str | None = None
    mismatch: set[str] = set()
    mentioned = False
    checked, leads = 0, False
    with open_log(path) as stream:
        for _, line in lines(stream):
            here = any(n in line for n in found_needles)
            mentioned = mentioned or here
            leads = leads or (here and _LEAD_MARK in line)
            if checked < max_records:
                ids = _record_ids(tool, line)
                checked += bool(ids)
                record_id = record_id or (ids[0] if ids else None)
                mismatch |= {i for i in ids if i != name_id}
            if mentioned and checked >= max_records:
                break
    problems = _problems(tool, name_id, record_id, mismatch, None if needles is None else mentioned)
    if leads:
        problems += ("it holds create_task's answer for this task (the report token): it is the Lead's own log",)
    return LogFacts(
        path=path,
        tool=tool,
        name_id=name_id,
        record_id=record_id,
        mentions_task=None if needles is None else mentioned,
        problems=problems,
    )


def _record_ids(tool: str | None, line: bytes) -> list[str]:
    if tool == "claude-code":
        return [m.decode("utf-8", "replace") for m in _SESSION_ID.findall(line)[:1]]
    if tool == "claude-code-subagent":
        return [m.decode("utf-8", "replace") for m in _AGENT_ID.findall(line)[:1]]
    if tool == "codex" and b'"session_meta"' in line:
        try:
            record = json.loads(line)
        except ValueError:
            return []
        if record.get("type") == "session_meta" and isinstance(record.get("payload"), dict):
            return [str(record["payload"].get("id"))]
    return []


def _problems(
    tool: str | None, name_id: str | None, record_id: str | None, mismatch: set[str], mentioned: bool | None
) -> tuple[str, ...]:
    problems = []
    if tool is None:
        problems.append(
            "the file name is none of <session-id>.jsonl, agent-<id>.jsonl (Claude Code) "
            "and rollout-…-<id>.jsonl (Codex)"
        )
    elif record_id is None:
        key = {"claude-code": "sessionId", "claude-code-subagent": "agentId"}.get(tool, "session_meta")
        problems.append(f"no record carries a session id ({key})")
    elif mismatch:
        problems.append(f"records carry session id {sorted(mismatch)[0]!r}, not {name_id!r} from the file name")
    if mentioned is False:
        problems.append("the log never mentions this task's ref or TASK path: it is not this task's session")
    return tuple(problems)


def verify(path: str, needles: list[str]) -> LogFacts:
    facts = inspect(path, needles)
    if not facts.ok:
        raise InvalidLocator(f"{path} was not confirmed as this task's log: {'; '.join(facts.problems)}")
    return facts


def candidates(tool: str, session_id: str, home: Path, env: dict[str, str]) -> list[str]:
    """Paths where ``tool`` keeps the log of ``session_id``; found by exact id only."""
    if tool not in TOOLS:
        raise InvalidInput(f"tool must be one of {', '.join(TOOLS)}")
    if not _ID.match(session_id):
        raise InvalidInput(f"session id {session_id!r} is not a plain id (letters, digits, '-', '_')")
    if tool == "claude-code":
        base = Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else home / ".claude"
        projects = base / "projects"
        names = (f"{session_id}.jsonl", f"{session_id}.jsonl.zst")
        found = [str(p / n) for p in _subdirs(projects) for n in names if (p / n).is_file()]
        agents = (f"agent-{session_id}.jsonl", f"agent-{session_id}.jsonl.zst")  # a native subagent's log
        found += [
            str(s / "subagents" / n)
            for p in _subdirs(projects)
            for s in _subdirs(p)
            for n in agents
            if (s / "subagents" / n).is_file()
        ]
        return sorted(found)
    base = Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else home / ".codex"
    suffixes = (f"-{session_id}.jsonl", f"-{session_id}.jsonl.zst")
    found = []
    for root in (base / "sessions", base / "archived_sessions"):
        for folder, _, files in os.walk(root):
            found += [os.path.join(folder, f) for f in files if f.startswith("rollout-") and f.endswith(suffixes)]
    return sorted(found)


def _subdirs(path: Path) -> list[Path]:
    try:
        return [entry for entry in path.iterdir() if entry.is_dir()]
    except OSError:
        return []


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

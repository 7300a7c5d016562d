"""Executor session logs (Claude Code, Codex): confirmed before recorded, found by exact id, read line by line.

``log_search`` searches one (SPEC §11). Nothing here scans caches on its own or picks a file by
modification time; a log is only ever read at a path the caller names or finds by an exact session id.
"""

from __future__ import annotations

import io
import json
import os
import re
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from handoff_core.errors import InvalidInput, InvalidLocator
from handoff_core.layout import LOG_TOOLS

__all__ = ["TOOLS", "LogFacts", "candidates", "inspect", "lines", "open_log", "verify"]

TOOLS = LOG_TOOLS
MAX_LINE = 8 * 1024 * 1024
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


def homes(home: Path, env: dict[str, str], state_root: Path | None = None, ref: str = "") -> list[Path | None]:
    """Where a task's executor may have kept its log: the user's home (as ``env`` points the CLIs), and,
    for a task, the home of its sandboxed launch (``files.executor_home``); None stands for the user's."""
    found: list[Path | None] = [None]
    if state_root is not None and ref:
        from handoff_core.files.executor_home import executor_home

        found.append(Path(executor_home(str(state_root), ref).home))
    return found


def found_logs(tool: str, session_id: str, home: Path, env: dict[str, str], places: list[Path | None]) -> list[str]:
    """``candidates`` in each place: the user's home with ``env``, or an executor's home as its CLI saw it."""
    found = []
    for place in places:
        found += candidates(tool, session_id, home, env) if place is None else candidates(tool, session_id, place, {})
    return found


def _subdirs(path: Path) -> list[Path]:
    try:
        return [entry for entry in path.iterdir() if entry.is_dir()]
    except OSError:
        return []

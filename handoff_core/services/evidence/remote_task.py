"""A TASK read from the team server, for a guard on a machine without the Lead's handoff tree.

One ``read_task`` with the task's report token as bearer, in the protocol's single-exchange form
(one POST, no session to open or close), bounded in time and in bytes. The answer is trusted only
when its bytes hash to the SHA-256 pinned in the launch line: the server, the network or a cache
can make the guard deny, never widen what it allows. A TASK that passed is kept in the user's cache
directory under its ref and hash, so the next event of the session asks nobody; a cached copy is
hashed again before use. No answer and no cached copy is a refusal (``TeamServerError``), which the
guard turns into a deny.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path
from typing import TYPE_CHECKING

from handoff_core.contract.task_file import parse_task
from handoff_core.errors import ConfigError, TaskChanged, TeamServerError, WorkspaceRefused
from handoff_core.files.cache_file import load_cache, save_cache
from handoff_core.files.git import work_tree_of
from handoff_core.layout import DEFAULT_STATE_ROOT, MAX_FILE_BYTES
from handoff_core.services.rules.scope_rule import ScopeRule

if TYPE_CHECKING:
    import http.client

__all__ = ["PROTOCOL", "TIMEOUT", "RemoteTask", "ask_stop", "fetch_task", "remote_task", "stop_url", "task_cache"]

TIMEOUT = 5.0  # seconds for the whole exchange: a hook holds up the agent while it waits
PROTOCOL = "2026-07-28"  # the single-exchange revision of MCP: a request needs no session
_ANSWER_LIMIT = 4 * MAX_FILE_BYTES  # the TASK twice (content and structured) and JSON escapes
_META = {
    "io.modelcontextprotocol/protocolVersion": PROTOCOL,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "handoff-mcp-guard", "version": "1"},
}


def task_cache() -> Path:
    """Where a guard keeps the TASKs it read: this user's cache directory."""
    from handoff_core.files.executor_home import cache_root

    return Path(cache_root()) / "tasks"


def _cache_path(cache: Path, ref: str, sha: str) -> Path:
    return cache / f"{hashlib.sha256(ref.encode()).hexdigest()[:32]}.{sha}.md"


def _connection(url: str, timeout: float) -> tuple[http.client.HTTPConnection, str]:
    import http.client  # here: an event answered from the cache never loads HTTP
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"--url {url!r} is not an http(s) URL of the team server's executor endpoint")
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    return kind(parts.hostname, parts.port, timeout=timeout), parts.path or "/"


def _message(body: bytes, content_type: str) -> dict[str, object]:
    """The JSON-RPC answer of a JSON body, or of the last ``data:`` event of an event stream."""
    if content_type.startswith("text/event-stream"):
        events = [line[5:].strip() for line in body.split(b"\n") if line.startswith(b"data:")]
        body = next((e for e in reversed(events) if b'"result"' in e or b'"error"' in e), b"")
    try:
        message = json.loads(body)
    except ValueError as exc:
        raise TeamServerError("the team server's answer to read_task is not JSON") from exc
    if not isinstance(message, dict):
        raise TeamServerError("the team server's answer to read_task is not a JSON-RPC message")
    return message


def _text(message: dict[str, object]) -> str:
    result = message.get("result")
    if not isinstance(result, dict) or result.get("isError"):
        content = result.get("content") if isinstance(result, dict) else None
        said = (
            content[0].get("text", "") if isinstance(content, list) and content and isinstance(content[0], dict) else ""
        )
        said = said or str(message.get("error", ""))
        raise TeamServerError(f"the team server refused read_task: {str(said)[:300]}")
    structured = result.get("structuredContent")
    text = structured.get("text") if isinstance(structured, dict) else None
    if not isinstance(text, str):
        raise TeamServerError("the team server's read_task answer holds no TASK text")
    return text


def _post(url: str, body: dict[str, object], headers: dict[str, str], timeout: float) -> tuple[int, str, bytes]:
    """One POST of ``body`` (JSON) to ``url``: (status, content type, answer), bounded in time and bytes."""
    import http.client

    deadline = time.monotonic() + timeout
    connection, path = _connection(url, timeout)
    try:
        connection.request("POST", path, body=json.dumps(body).encode(), headers=headers)
        response = connection.getresponse()
        answer, chunk = b"", b"."
        while chunk and len(answer) <= _ANSWER_LIMIT:
            if (left := deadline - time.monotonic()) <= 0:
                raise TeamServerError(f"the team server did not answer within {timeout:g} s")
            if connection.sock is not None:
                connection.sock.settimeout(left)
            chunk = response.read1(1 << 16)
            answer += chunk
    except (OSError, http.client.HTTPException) as exc:
        raise TeamServerError(f"cannot reach the team server at {url}: {exc}") from exc
    finally:
        connection.close()
    if len(answer) > _ANSWER_LIMIT:
        raise TeamServerError(f"the team server's answer is over {_ANSWER_LIMIT} bytes")
    return response.status, response.getheader("Content-Type", ""), answer


def fetch_task(url: str, token: str, ref: str, timeout: float = TIMEOUT) -> bytes:
    """The TASK of ``ref`` as the team server at ``url`` holds it, read with ``token``, within ``timeout``."""
    request: dict[str, object] = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "read_task", "arguments": {"ref": ref}, "_meta": _META},
    }
    headers = {
        "Authorization": f"Bearer {token}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": PROTOCOL,
        "Mcp-Method": "tools/call",
        "Mcp-Name": "read_task",
    }
    status, kind, body = _post(url, request, headers, timeout)
    if status != HTTPStatus.OK:
        raise TeamServerError(f"the team server answered read_task with HTTP {status}")
    return _text(_message(body, kind)).encode()


def stop_url(url: str) -> str:
    """The team server's stop endpoint beside the executor endpoint ``url`` (``…/executor/mcp``)."""
    return url.removesuffix("/").removesuffix("/mcp") + "/stop"


def ask_stop(url: str, token: str, ref: str, session_id: str, active: bool, timeout: float = TIMEOUT) -> bool:
    """Whether the team server blocks this end of a session of ``ref`` (it has no REPORT): the server
    counts the blocks and records an end without a REPORT where the Lead reads them. Raises
    ``TeamServerError`` when it cannot be asked or refuses."""
    where = stop_url(url)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    asked = {"ref": ref, "session_id": session_id, "stop_hook_active": active}
    status, _, body = _post(where, asked, headers, timeout)
    if status != HTTPStatus.OK:
        raise TeamServerError(f"the team server answered the stop with HTTP {status}: {body[:200]!r}")
    try:
        answer = json.loads(body)
    except ValueError as exc:
        raise TeamServerError("the team server's answer to the stop is not JSON") from exc
    if not isinstance(answer, dict) or not isinstance(answer.get("block"), bool):
        raise TeamServerError("the team server's answer to the stop says neither block nor let go")
    return bool(answer["block"])


_SHA = re.compile(r"[0-9a-f]{64}")


def remote_task(url: str, token: str, ref: str, sha: str, cache: Path | None = None) -> str:
    """The TASK text of ``ref`` whose bytes hash to ``sha``: from the cache when a copy there still
    hashes to it, else from the team server (then cached). Refused when neither gives those bytes."""
    if not _SHA.fullmatch(sha):
        raise ConfigError("--task-sha256 must be the 64 hex digits of the TASK's sha256, as the launch line printed")
    place = _cache_path(cache or task_cache(), ref, sha)
    data = load_cache(place, MAX_FILE_BYTES)
    if data is None or hashlib.sha256(data).hexdigest() != sha:
        data = fetch_task(url, token, ref)
        if hashlib.sha256(data).hexdigest() != sha:
            raise TaskChanged(
                f"the team server's TASK of {ref} does not hash to the sha256 this hook was printed for: "
                "the TASK changed or the wrong server answered; ask the Lead for a new launch line"
            )
        save_cache(place, data)
    return data.decode("utf-8")


@dataclass(frozen=True)
class RemoteTask:
    """Where a guard without the Lead's tree gets its task: the team server's executor endpoint, the
    task's token and the pinned sha256; the task's root is the executor's own clone."""

    url: str
    token: str
    ref: str
    sha: str
    project_root: Path | None = None  # None: the clone the event's working directory lies in

    def rule(self, cwd: str) -> ScopeRule:
        """The scope rule of the task, judged in the clone holding ``cwd`` (or the root given)."""
        text = remote_task(self.url, self.token, self.ref, self.sha)
        root = self.project_root or work_tree_of(Path(os.path.realpath(cwd)))
        if root is None:
            raise WorkspaceRefused(f"{cwd} is in no git clone: run the executor in its clone of the project")
        root = Path(os.path.realpath(root))
        return ScopeRule(parse_task(text.removeprefix("\ufeff")), self.ref, root, root / DEFAULT_STATE_ROOT)

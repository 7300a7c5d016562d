"""A pinned TASK from the team server, as a hook process gets it on every tool call of an executor elsewhere.

One ``read_task`` with the task's report token as bearer, in the protocol's single-exchange form
(one POST, no session), bounded in time and bytes: over a plain socket for ``http://``
(``files.plain_http``), through ``http.client`` and ``ssl`` only for ``https://``. The bytes are
trusted only when they hash to the SHA-256 pinned in the launch line: the server, the network or
the cache can make the guard deny, never widen what it allows. A TASK that passed is kept in this
user's cache directory under its ref and hash, and a cached copy is used only when its bytes hash
to the pin again (a copy that does not is fetched anew and replaced): the pin is what makes it
trustworthy, so no key or MAC is needed. No answer and no matching copy is a refusal
(``TeamServerError``, ``TaskChanged``), which the guard turns into a deny. Loads ``json`` and
``_socket``; never ``hashlib``, ``http``, ``urllib``, ``email``, ``pathlib`` or ``typing``.
"""

from __future__ import annotations

import json
import os
import stat

from handoff_core.contract.digest import sha256_hex
from handoff_core.errors import ConfigError, TaskChanged, TeamServerError
from handoff_core.services.evidence.lean_lines import simple_hex
from handoff_core.services.evidence.task_pin import PinnedTask
from handoff_core.services.rules.scope_rule import ScopeRule

__all__ = [
    "ANSWER_LIMIT",
    "PROTOCOL",
    "TIMEOUT",
    "cached_path",
    "fetch_task",
    "pinned_task",
    "post",
    "remote_pinned",
    "remote_rule",
]

TIMEOUT = 5.0  # seconds for the whole exchange: a hook holds up the agent while it waits
PROTOCOL = "2026-07-28"  # the single-exchange revision of MCP: a request needs no session
_OK = 200  # http.HTTPStatus.OK, without loading http
MAX_TASK_BYTES = 4 * 1024 * 1024  # layout.MAX_FILE_BYTES (a test pins the two equal)
ANSWER_LIMIT = 4 * MAX_TASK_BYTES  # the TASK twice (content and structured) and JSON escapes
_META = {
    "io.modelcontextprotocol/protocolVersion": PROTOCOL,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "handoff-mcp-guard", "version": "1"},
}
_STATE_ROOT = "speculo/.speculo"  # layout.DEFAULT_STATE_ROOT (a test pins the two equal)
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def post(url: str, body: dict[str, object], headers: dict[str, str], timeout: float) -> tuple[int, str, bytes]:
    """One POST of ``body`` (JSON) to ``url``: (status, content type, answer), bounded in time and bytes."""
    from handoff_core.files.plain_http import PlainHttpRefused
    from handoff_core.files.plain_http import post as plain_post

    data = json.dumps(body).encode()
    try:
        answer = plain_post(url, data, headers, timeout, ANSWER_LIMIT)
    except PlainHttpRefused:
        from handoff_core.services.evidence.tls_post import tls_post  # https only: ssl costs ~10 ms to load

        return tls_post(url, data, headers, timeout, ANSWER_LIMIT)
    return answer.status, answer.content_type, answer.body


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
    status, kind, body = post(url, request, headers, timeout)
    if status != _OK:
        raise TeamServerError(f"the team server answered read_task with HTTP {status}")
    return _text(_message(body, kind)).encode()


def cached_path(cache: str, ref: str, sha: str) -> str:
    """Where the copy of ``ref``'s TASK pinned to ``sha`` is kept in the folder ``cache``."""
    return os.path.join(cache, f"{sha256_hex(ref.encode())[:32]}.{sha}.md")


def _load(path: str) -> bytes | None:
    """A regular file of this user's, writable by nobody else, up to the TASK's limit; None otherwise."""
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o022:
            return None
        chunks, size = [], 0
        while size <= MAX_TASK_BYTES and (chunk := os.read(fd, 1 << 20)):
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks) if size <= MAX_TASK_BYTES else None
    except OSError:
        return None
    finally:
        os.close(fd)


def _save(path: str, data: bytes) -> None:
    """Keep the copy: its name holds the sha256 its bytes must have, so no rename is needed; a wrong or
    cut-short file there is removed and the copy made anew (``O_EXCL``, no link followed). A reader
    that meets a copy half written finds it does not hash to the pin and asks the team server; a copy
    that cannot be written costs the next event a request, nothing else."""
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        try:  # noqa: SIM105 - contextlib is not loaded on the hook's path
            os.unlink(path)
        except FileNotFoundError:
            pass
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError:
        return  # another event's copy is being made, or the folder is not writable
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    except OSError:
        pass  # a cut-short copy fails the pin on its next read
    finally:
        os.close(fd)


def pinned_task(url: str, token: str, ref: str, sha: str, cache: str) -> bytes:
    """The TASK bytes of ``ref`` that hash to ``sha``: the copy in ``cache`` when it still hashes to it,
    else the team server's (then kept there). Refused when neither gives those bytes."""
    if not simple_hex(sha):
        raise ConfigError("--task-sha256 must be the 64 hex digits of the TASK's sha256, as the launch line printed")
    place = cached_path(cache, ref, sha)
    data = _load(place)
    if data is not None and sha256_hex(data) == sha:
        return data
    data = fetch_task(url, token, ref)
    if sha256_hex(data) != sha:
        raise TaskChanged(
            f"the team server's TASK of {ref} does not hash to the sha256 this hook was printed for: "
            "the TASK changed or the wrong server answered; ask the Lead for a new launch line"
        )
    _save(place, data)
    return data


def remote_pinned(url: str, token: str, ref: str, sha: str) -> PinnedTask:
    """The hook's reading of the task of an executor elsewhere: its pinned TASK, cached in this user's
    cache folder, its scope read as a local pinned TASK's is."""
    from handoff_core.files.executor_home import cache_root

    data = pinned_task(url, token, ref, sha, os.path.join(cache_root(), "tasks"))
    return PinnedTask(data, sha, has_report=False)


def remote_rule(task: PinnedTask, ref: str, project_root: str, cwd: str) -> ScopeRule:
    """The scope rule of an executor elsewhere, judged in its own clone: ``project_root`` when given,
    else the work tree holding ``cwd`` (the nearest folder with ``.git``, as git finds it)."""
    from handoff_core.errors import WorkspaceRefused
    from handoff_core.files.git_config import work_tree_top

    root = project_root or work_tree_top(os.path.realpath(cwd))
    if root is None:
        raise WorkspaceRefused(f"{cwd} is in no git clone: run the executor in its clone of the project")
    root = os.path.realpath(root)
    return ScopeRule(task.task, ref, root, os.path.join(root, _STATE_ROOT))

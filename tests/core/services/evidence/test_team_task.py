"""A guard elsewhere trusts only TASK bytes that hash to its pin: a cached copy that does not is fetched
anew, a server that answers other bytes or garbage is a refusal, and the hook turns every refusal
into a deny with its reason. The --url hook loads no HTTP library for an http:// team server."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.requests import implementation
from handoff_core import layout
from handoff_core.contract.digest import sha256_hex
from handoff_core.errors import HandoffError
from handoff_core.services.evidence import team_task
from handoff_core.services.evidence.team_task import cached_path, pinned_task
from handoff_core.services.writing.store import Store
from server.client_config import hook_entry
from tests.support.canned_http import Canned, canned_server, read_task_answer
from tests.support.gitrepo import make_repo

pytestmark = pytest.mark.slow  # the team server runs as its own process
TASK = "---\nkind: implementation\n---\nthe TASK as published\n"
PIN = sha256_hex(TASK.encode())
REF = "2026-12-05-x/20261205T000000Z/001-x"
HTTP_MODULES = {"http", "http.client", "ssl", "email", "urllib", "urllib.parse", "hashlib", "pathlib", "typing"}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Canned]:
    with canned_server(tmp_path) as canned:
        yield canned


def _code(url: str, cache: Path, sha: str = PIN) -> str:
    with pytest.raises(HandoffError) as refused:
        pinned_task(url, "token", REF, sha, str(cache))
    return refused.value.code


def test_a_cached_copy_that_hashes_to_the_pin_is_used_without_asking(server: Canned, tmp_path: Path) -> None:
    server.answers(read_task_answer(TASK))
    cache = tmp_path / "cache"
    assert pinned_task(server.url, "token", REF, PIN, str(cache)) == TASK.encode()
    assert pinned_task(server.url, "token", REF, PIN, str(cache)) == TASK.encode()
    assert server.requests == 1
    assert Path(cached_path(str(cache), REF, PIN)).read_bytes() == TASK.encode()


@pytest.mark.parametrize("mode", [0o600, 0o620])  # a copy edited by someone, or one others could have written
def test_a_cached_copy_not_to_be_trusted_is_refused_and_fetched_anew(server: Canned, tmp_path: Path, mode: int) -> None:
    server.answers(read_task_answer(TASK))
    cache = tmp_path / "cache"
    cache.mkdir()
    planted = Path(cached_path(str(cache), REF, PIN))
    planted.write_bytes(TASK.encode() if mode != 0o600 else TASK.replace("published", "widened").encode())
    planted.chmod(mode)
    assert pinned_task(server.url, "token", REF, PIN, str(cache)) == TASK.encode()
    assert server.requests == 1
    assert planted.read_bytes() == TASK.encode()
    assert planted.stat().st_mode & 0o777 == 0o600


def test_a_wrong_cached_copy_with_no_server_to_ask_is_refused(tmp_path: Path) -> None:
    with canned_server(tmp_path) as canned:
        url = canned.url
    cache = tmp_path / "cache"
    cache.mkdir()
    Path(cached_path(str(cache), REF, PIN)).write_bytes(b"not the TASK")
    assert _code(url, cache) == "team_server_error"


def test_a_server_answering_other_bytes_than_the_pinned_ones_is_refused_and_nothing_is_kept(
    server: Canned, tmp_path: Path
) -> None:
    server.answers(read_task_answer(TASK.replace("published", "widened")))
    assert _code(server.url, tmp_path / "cache") == "task_changed"
    assert not Path(cached_path(str(tmp_path / "cache"), REF, PIN)).exists()


@pytest.mark.parametrize(
    "answer",
    [
        b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nnot json!",
        b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 2\r\n\r\n{}",
        read_task_answer(TASK).replace(b'"structuredContent"', b'"unstructured"'),
    ],
)
def test_an_answer_without_the_task_is_refused(server: Canned, tmp_path: Path, answer: bytes) -> None:
    server.answers(answer)
    assert _code(server.url, tmp_path / "cache") == "team_server_error"


def test_an_https_url_goes_through_tls_and_a_server_that_cannot_speak_it_is_refused(
    server: Canned, tmp_path: Path
) -> None:
    server.answers(read_task_answer(TASK))  # plain HTTP where TLS was asked for: the handshake fails
    assert _code(server.url.replace("http://", "https://"), tmp_path / "cache") == "team_server_error"


def test_a_pin_that_is_not_a_sha256_is_refused_before_asking(server: Canned, tmp_path: Path) -> None:
    assert _code(server.url, tmp_path / "cache", sha="ABC") == "config_error"
    assert server.requests == 0


def test_the_limits_the_hook_reads_without_layout_are_layouts() -> None:
    assert team_task.MAX_TASK_BYTES == layout.MAX_FILE_BYTES
    assert layout.DEFAULT_STATE_ROOT == team_task._STATE_ROOT


def _hook(
    server: Canned, home: Path, clone: Path, pinned: tuple[str, str], target: str
) -> tuple[dict[str, object], set[str]]:
    """The --url hook's answer to a Write of ``target`` in ``clone`` for the task ``pinned`` (ref, sha256),
    and the modules it loaded."""
    event: dict[str, object] = {"hook_event_name": "PreToolUse", "tool_name": "Write", "cwd": str(clone)}
    event["tool_input"] = {"file_path": str(clone / target), "content": "x"}
    flags = ["--url", server.url, "--ref", pinned[0], "--task-sha256", pinned[1]]
    env = {"PATH": os.environ["PATH"], "HANDOFF_TOKEN": "token", "XDG_CACHE_HOME": str(home / ".cache")}
    command = [hook_entry()[0], "-X", "importtime", *hook_entry()[1:], *flags]
    done = subprocess.run(
        command, input=json.dumps(event).encode(), capture_output=True, env=env, cwd=clone, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr[-500:]
    lines = done.stderr.decode().splitlines()
    loaded = {line.split("|")[-1].strip() for line in lines if line.startswith("import time:")}
    answer = json.loads(done.stdout)["hookSpecificOutput"] if done.stdout else {"permissionDecision": "allow"}
    return answer, loaded


def test_the_url_hook_judges_a_pinned_task_in_its_clone_without_loading_http_libraries(
    server: Canned, store: Store, project: Path, tmp_path: Path
) -> None:
    make_repo(project)
    task = store.create_task(implementation())
    (published,) = store.roots.state_root.rglob("TASK.md")
    text = published.read_text()
    server.answers(read_task_answer(text))
    sha = sha256_hex(text.encode())
    allowed, loaded = _hook(server, tmp_path, project, (str(task.ref), sha), "src/a1/x.py")
    denied, _ = _hook(server, tmp_path, project, (str(task.ref), sha), "src/b/x.py")
    assert (allowed["permissionDecision"], denied["permissionDecision"]) == ("allow", "deny")
    assert server.requests == 1  # the second event read its cached copy
    assert "handoff_core.services.evidence.team_task" in loaded
    assert not loaded & HTTP_MODULES, sorted(loaded & HTTP_MODULES)


def test_a_garbled_answer_makes_the_url_hook_deny_with_its_reason(server: Canned, tmp_path: Path) -> None:
    (tmp_path / "clone").mkdir()
    make_repo(tmp_path / "clone")
    server.answers(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n")  # cut short in its headers
    answer, _ = _hook(server, tmp_path, tmp_path / "clone", (REF, PIN), "src/a1/x.py")
    assert answer["permissionDecision"] == "deny"
    assert REF in str(answer["permissionDecisionReason"])

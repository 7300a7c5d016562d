"""A third-party client drives the server over stdio: the official TypeScript SDK's Client."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.calls import task_args
from tests.support.interop import CLIENTS
from tests.support.wire import serve_command

pytestmark = pytest.mark.slow  # a node client and a server process


@pytest.fixture
def node() -> str:
    found = shutil.which("node")
    if found is None:
        pytest.skip("node is not installed; scripts/test installs the client with npm")
    if not (CLIENTS / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
        pytest.fail("the TypeScript SDK client is not installed: run `npm ci` in tests/clients (scripts/test does)")
    return found


def test_the_typescript_sdk_client_lists_tools_creates_and_validates(node: str, project: Path, tmp_path: Path) -> None:
    calls = [
        {"name": "create_task", "arguments": task_args()},
        {"name": "validate_handoff", "arguments": {"ref": "$0.ref", "stage": "dispatch"}},
        {"name": "validate_handoff", "arguments": {"ref": "$0.ref", "stage": "return"}},
        {"name": "read_task", "arguments": {"ref": "not/a/ref"}},
    ]
    args = serve_command("lead", project, tmp_path / "s")
    result = subprocess.run(
        [node, str(CLIENTS / "sdk_client.mjs"), *args],
        input=json.dumps(calls),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    output = json.loads(result.stdout)
    assert {"create_task", "write_report", "validate_handoff"} <= set(output["tools"])
    created, dispatch, returned, bad = output["results"]
    assert not created["isError"]
    assert created["structuredContent"]["ref"].endswith("/001-implement-a1")
    assert dispatch["structuredContent"]["ok"] is True
    assert "REPORT.md not found" in returned["structuredContent"]["errors"]
    assert bad["isError"]
    assert "invalid_id" in bad["text"]

"""The README is true: its tool list is the server's, and its walk-through, run from a fresh copy, ends
in a reported, validated task."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from server.config import LEAD_TOOLS, SHARED_TOOLS
from tests.support.calls import call
from tests.support.readme import CLONE, FENCE, README, ROOT, filled, region

MAX_LINES = 250


def test_the_readme_stays_a_first_hour_read() -> None:
    lines = README.read_text().splitlines()
    assert len(lines) <= MAX_LINES
    headings = [line for line in lines if line.startswith("## ")]
    assert headings[:2] == ["## Set-up", "## Your first dispatch"]  # the first dispatch right after set-up


def test_the_readme_lists_every_tool_of_both_roles_once_with_its_role() -> None:
    rows = re.findall(r"^\| `([a-z_]+)` \| (lead|both) \| [^|]+ \|$", region("tools"), re.MULTILINE)
    expected = [(name, "lead") for name in LEAD_TOOLS] + [(name, "both") for name in SHARED_TOOLS]
    assert sorted(rows) == sorted(expected)
    assert len(rows) == len({name for name, _ in rows})


def test_the_pages_the_readme_links_on_this_branch_exist() -> None:
    linked = set(re.findall(r"\]\((docs/[a-z-]+\.(?:md|png))", README.read_text()))
    mine = {"docs/reference.md", "docs/validator.md", "docs/layout.md", "docs/performance.md", "docs/board.png"}
    assert mine <= linked
    assert [page for page in sorted(mine) if not (ROOT / page).exists()] == []


def fresh_copy(target: Path) -> Path:
    """The repository's files as a clone would have them (tracked and new, never .venv or node_modules)."""
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True, check=True, timeout=60
    )
    for name in filter(None, listed.stdout.decode().split("\0")):
        if (ROOT / name).is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, target / name)
    return target


def shell(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,  # a server the set-up starts ends at once, as with a client that left
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, f"{script}\n{done.stdout}\n{done.stderr}"
    return done


def stdio(entry: dict[str, Any], env: dict[str, str]) -> StdioServerParameters:
    return StdioServerParameters(command=entry["command"], args=entry["args"], env=env)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.slow
@pytest.mark.anyio
async def test_the_readme_walkthrough_from_a_fresh_copy_ends_in_a_reported_validated_task(tmp_path: Path) -> None:
    clone = fresh_copy(tmp_path / "handoff-mcp")
    setup = FENCE.findall(README.read_text().split("## Set-up", 1)[1])[0][1].splitlines()[0]
    home = tmp_path / "home"
    (home / "my-project").mkdir(parents=True)
    env = {"HOME": str(home), "PATH": f"{clone}/.venv/bin{os.pathsep}{os.environ['PATH']}"}
    env |= {k: v for k, v in os.environ.items() if k.startswith(("PIP_", "UV_"))}  # where packages come from
    shell(setup.split("#")[0], clone, env)
    project = home / "my-project"
    subprocess.run(["git", "init", "-q"], cwd=project, check=True, timeout=60)
    values = {"CLONE": str(clone)}
    results: dict[str, dict[str, Any]] = {}
    printed = ""
    for info, body in FENCE.findall(region("walkthrough")):
        words = info.split()
        if words[:1] == ["sh"]:
            printed = shell(filled(body.replace(CLONE, str(clone)), values), project, env).stdout
        elif words[:1] == ["json"]:
            tool, role = words[1], (words[2] if len(words) > 2 else "lead")
            if role == "lead":
                entry = json.loads((project / ".mcp.json").read_text())["mcpServers"]["handoff"]
            else:
                entry = json.loads(results["create_task"]["executor_config"]["claude_code_mcp_json"])
                entry = entry["mcpServers"]["handoff"]
            async with Client(stdio(entry, env)) as client:
                results[tool] = await call(client, tool, **json.loads(filled(body, values)))
            if tool == "create_task":
                created = results[tool]
                values |= {"REF": created["ref"], "ROUND": created["ref"].split("/")[1]}
                values |= {"TOKEN": created["report_token"], "TASK_SHA256": created["task_sha256"]}
    ref = values["REF"]
    assert results["write_report"]["created"]
    assert f"{ref} REPORT.md" in results["wait_for_reports"]["arrived"]
    assert results["read_handoff"]["focused"].startswith("Added notes/hello.txt")
    assert [t["state"] for t in results["handoff_status"]["tasks"] if t["ref"] == ref] == ["returned:completed"]
    assert "returned:completed" in printed  # the last block's handoff-mcp status, after handoff-validate passed
    assert (project / "notes" / "hello.txt").read_text() == "hello\n"

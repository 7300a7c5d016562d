"""The repository as a Claude Code and a Codex plugin marketplace, checked with the real CLIs (no model)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from server.config import ROLE_TOOLS
from tests.support.cli import cli

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "plugins" / "handoff-mcp"
SKILL = PLUGIN / "skills" / "handoff-dispatch" / "SKILL.md"
pytestmark = pytest.mark.slow  # the real Claude Code and Codex CLIs


def run(command: list[str], cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    """A CLI under its own HOME, with this installation's handoff-mcp first on PATH."""
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    env = {"PATH": path, "HOME": str(home), "CODEX_HOME": str(home / ".codex")}
    env |= {"DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
    (home / ".codex").mkdir(parents=True, exist_ok=True)
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=180, check=False)


def a_project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    (project / "speculo" / ".speculo").mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=project, check=True, timeout=60)
    return project


def test_claude_code_validates_the_plugin_and_the_marketplace_strictly(tmp_path: Path) -> None:
    claude = cli("claude")
    for target in (PLUGIN, ROOT):
        done = run([claude, "plugin", "validate", "--strict", str(target)], ROOT, tmp_path / "home")
        assert done.returncode == 0, done.stdout + done.stderr
        assert "Validation passed" in done.stdout


def test_claude_code_installs_the_plugin_from_the_repository_and_connects_the_lead(tmp_path: Path) -> None:
    claude, home, project = cli("claude"), tmp_path / "home", a_project(tmp_path)
    added = run([claude, "plugin", "marketplace", "add", str(ROOT)], project, home)
    assert added.returncode == 0, added.stdout + added.stderr
    installed = run([claude, "plugin", "install", "handoff-mcp@handoff-mcp"], project, home)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    details = run([claude, "plugin", "details", "handoff-mcp@handoff-mcp"], project, home).stdout
    assert re.search(r"Skills \(1\)\s+handoff-dispatch", details), details
    assert re.search(r"MCP servers \(1\)\s+handoff", details), details
    listed = run([claude, "mcp", "list"], project, home)
    assert re.search(r"^plugin:handoff-mcp:handoff: handoff-mcp serve --role lead .*Connected", listed.stdout, re.M), (
        listed.stdout + listed.stderr
    )


def test_codex_adds_the_marketplace_and_the_plugin_with_its_server_and_skill(tmp_path: Path) -> None:
    codex, home, project = cli("codex"), tmp_path / "home", a_project(tmp_path)
    added = run([codex, "plugin", "marketplace", "add", str(ROOT)], project, home)
    assert added.returncode == 0, added.stderr
    done = run([codex, "plugin", "add", "handoff-mcp@handoff-mcp"], project, home)
    assert done.returncode == 0, done.stderr
    assert "installed, enabled" in run([codex, "plugin", "list"], project, home).stdout
    (server,) = json.loads(run([codex, "mcp", "list", "--json"], project, home).stdout)
    assert (server["name"], server["enabled"]) == ("handoff", True)
    assert [server["transport"]["command"], *server["transport"]["args"]] == ["handoff-mcp", "serve", "--role", "lead"]
    cached = list((home / ".codex" / "plugins" / "cache").rglob("handoff-dispatch/SKILL.md"))
    assert [path.read_text() for path in cached] == [SKILL.read_text()]


def test_both_manifests_name_the_package_version_and_the_lead_server_once() -> None:
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    manifests = [
        json.loads((PLUGIN / kind / "plugin.json").read_text()) for kind in (".claude-plugin", ".codex-plugin")
    ]
    assert {m["version"] for m in manifests} == {version}
    assert {m["mcpServers"] for m in manifests} == {"./.mcp.json"}  # one server entry, shared
    servers = json.loads((PLUGIN / ".mcp.json").read_text())["mcpServers"]
    assert servers == {"handoff": {"command": "handoff-mcp", "args": ["serve", "--role", "lead"], "alwaysLoad": True}}


def test_the_skill_walks_the_loop_with_the_leads_own_tools() -> None:
    text = SKILL.read_text()
    called = set(re.findall(r"`([a-z_]+)\(", text))
    assert called <= set(ROLE_TOOLS["lead"]), called - set(ROLE_TOOLS["lead"])
    loop = ["create_task", "executor_config", "wait_for_reports", "read_handoff", "audit_task", "release_writer"]
    positions = [text.index(step) for step in loop]
    assert positions == sorted(positions)  # dispatch, launch, wait, read, audit, accept: in that order
    assert "handoff-mcp guard" in text


def test_the_plugin_guards_the_leads_own_edits_with_guard_lead() -> None:
    hooks = json.loads((PLUGIN / "hooks" / "hooks.json").read_text())["hooks"]["PreToolUse"]
    assert [(h["matcher"], [c["command"] for c in h["hooks"]]) for h in hooks] == [
        ("Write|Edit|MultiEdit|NotebookEdit", ["handoff-mcp guard --lead"])
    ]

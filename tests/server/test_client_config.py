"""``handoff-mcp config``: configurations that the real Claude Code and Codex CLIs accept as printed."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from server.cli import main
from server.client_config import server_command
from server.config import ROLE_TOOLS
from tests.support.cli import cli, run

README = Path(__file__).resolve().parents[2] / "README.md"
DOC_COMMAND = "/opt/handoff-mcp/bin/handoff-mcp"


def printed(capsys: pytest.CaptureFixture[str], project: Path, *args: str) -> str:
    assert main(["config", "--project-root", str(project), *args]) == 0
    return capsys.readouterr().out


def approved(project: Path) -> None:
    """What a person does once per project: let Claude Code start the project's .mcp.json servers."""
    subprocess.run(["git", "init", "-q"], cwd=project, check=True, timeout=60)
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.local.json").write_text(json.dumps({"enabledMcpjsonServers": ["handoff"]}))


@pytest.mark.slow
def test_claude_code_shows_the_printed_project_config_connected(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    claude = cli("claude")
    (project / ".mcp.json").write_text(printed(capsys, project, "--role", "lead", "--client", "claude-code"))
    approved(project)
    done = run([claude, "mcp", "list"], project, tmp_path / "home")
    assert re.search(r"^handoff: .*Connected", done.stdout, re.MULTILINE), done.stdout + done.stderr


@pytest.mark.slow
def test_a_broken_command_is_not_shown_connected(project: Path, tmp_path: Path) -> None:
    claude = cli("claude")
    broken = {"mcpServers": {"handoff": {"type": "stdio", "command": str(tmp_path / "missing"), "args": []}}}
    (project / ".mcp.json").write_text(json.dumps(broken))
    approved(project)
    done = run([claude, "mcp", "list"], project, tmp_path / "home")
    assert "Failed to connect" in done.stdout, done.stdout + done.stderr


def codex_server(done: subprocess.CompletedProcess[str]) -> dict[str, object]:
    assert done.returncode == 0, done.stderr
    value = json.loads(done.stdout)
    return dict(value[0] if isinstance(value, list) else value)


@pytest.mark.slow
def test_codex_reads_the_printed_toml(project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    codex = cli("codex")
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    toml = printed(capsys, project, "--role", "executor", "--client", "codex")
    (home / ".codex" / "config.toml").write_text(toml)
    server = codex_server(run([codex, "mcp", "list", "--json"], project, home))
    transport = server["transport"]
    assert isinstance(transport, dict)
    assert transport["command"] == shutil.which("handoff-mcp") or Path(str(transport["command"])).name == "handoff-mcp"
    assert transport["args"][:3] == ["serve", "--role", "executor"]
    assert str(project) in transport["args"]
    got = codex_server(run([codex, "mcp", "get", "handoff", "--json"], project, home))
    assert got["enabled_tools"] == list(ROLE_TOOLS["executor"])


@pytest.mark.slow
def test_codex_reads_the_printed_command_line_arguments(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    codex = cli("codex")
    line = printed(capsys, project, "--role", "executor", "--client", "codex-args").split()
    words = shlex.split(" ".join(line))
    assert words[:2] == ["env", "HANDOFF_ROLE=executor"]
    words = words[2:]
    assert (words[0], words[-1]) == ("codex", "exec")
    server = codex_server(run([codex, *words[1:-1], "mcp", "get", "handoff", "--json"], project, tmp_path / "home"))
    assert server["enabled_tools"] == list(ROLE_TOOLS["executor"])
    assert isinstance(server["transport"], dict)
    assert server["transport"]["args"][:3] == ["serve", "--role", "executor"]


def worker_section(text: str) -> str:
    start = text.index("<!-- worker-config:start -->")
    return text[start : text.index("<!-- worker-config:end -->")]


def test_the_readme_worker_section_is_what_config_prints(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = tmp_path / "project"
    project.mkdir()
    section = worker_section(README.read_text())
    for client in ("claude-code-cli", "codex"):
        out = printed(capsys, project, "--role", "executor", "--client", client, "--command", DOC_COMMAND)
        assert out.replace(str(project), "/path/to/project").strip() in section, client


def test_a_worker_config_allows_only_the_executor_tools_and_loads_nothing_else(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = printed(capsys, project, "--role", "executor", "--client", "herdr")
    assert "--strict-mcp-config" in line
    allowed = line.split("--allowedTools ", 1)[1].split()[0].split(",")
    assert allowed == [f"mcp__handoff__{tool}" for tool in ROLE_TOOLS["executor"]]
    assert "create_task" not in line


def test_a_command_inside_uvs_cache_comes_with_a_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / ".cache" / "uv" / "archive-v0" / "abc123" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "handoff-mcp").write_text("#!/bin/sh\n")
    monkeypatch.setattr(sys, "executable", str(bin_dir / "python"))
    command, note = server_command()
    assert command == str(bin_dir / "handoff-mcp")
    assert note is not None
    assert "uv tool install" in note


def test_an_installed_command_outside_any_cache_has_no_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "handoff-mcp").write_text("#!/bin/sh\n")
    monkeypatch.setattr(sys, "executable", str(bin_dir / "python"))
    monkeypatch.delenv("UV_CACHE_DIR", raising=False)
    assert server_command() == (str(bin_dir / "handoff-mcp"), None)


@pytest.mark.slow
def test_the_printed_claude_mcp_add_line_says_what_approves_it_and_that_works(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    claude = cli("claude")
    home = tmp_path / "home"
    assert main(["config", "--project-root", str(project), "--role", "lead", "--client", "claude-code-cli"]) == 0
    out, err = capsys.readouterr()
    words = shlex.split(out)
    assert words[:6] == ["claude", "mcp", "add-json", "--scope", "project", "handoff"]
    assert json.loads(words[6])["alwaysLoad"] is True  # Claude Code waits for it before the Lead's first turn
    subprocess.run(["git", "init", "-q"], cwd=project, check=True, timeout=60)
    added = run([claude, *words[1:]], project, home)
    assert added.returncode == 0, added.stderr
    pending = run([claude, "mcp", "list"], project, home)
    assert re.search(r"^handoff: .*Pending approval", pending.stdout, re.MULTILINE), pending.stdout
    assert '"Pending approval"' in err
    assert '"enabledMcpjsonServers": ["handoff"] to .claude/settings.local.json' in err
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.local.json").write_text('{"enabledMcpjsonServers": ["handoff"]}')
    done = run([claude, "mcp", "list"], project, home)
    assert re.search(r"^handoff: .*Connected", done.stdout, re.MULTILINE), done.stdout + done.stderr


def test_every_executor_form_for_a_task_carries_its_hooks_or_says_on_stderr_where_they_go(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bench.requests import implementation
    from handoff_core.services.writing.store import Store

    ref = str(Store(project / "speculo" / ".speculo", project).create_task(implementation()).ref)
    secret = ["--secret-file", str(tmp_path / "no-secret")]  # the Lead's secret is not here: no session pinned
    events = ("--event pre-tool", "--event post-tool", "--event stop")
    for client in ("claude-code-cli", "herdr", "orca", "codex", "codex-args"):
        out = printed(capsys, project, "--role", "executor", "--client", client, "--ref", ref, *secret)
        assert all(event in out for event in events), client
        assert "--task-sha256 " in out, client
    assert (
        main(
            [
                "config",
                "--project-root",
                str(project),
                "--role",
                "executor",
                "--client",
                "claude-code",
                "--ref",
                ref,
                *secret,
            ]
        )
        == 0
    )
    shown = capsys.readouterr()
    assert "--event" not in shown.out  # .mcp.json holds no hooks ...
    assert ".mcp.json holds no hooks" in shown.err  # ... so stderr says where they go, and gives them
    assert all(event in shown.err for event in events)
    assert "no session id is pinned" in shown.err


@pytest.mark.parametrize("client", ["codex", "codex-args"])
def test_a_codex_lead_configuration_prints_the_leads_own_guard(
    project: Path, capsys: pytest.CaptureFixture[str], client: str
) -> None:
    assert main(["config", "--project-root", str(project), "--role", "lead", "--client", client]) == 0
    out = capsys.readouterr().out
    if client == "codex":  # in the printed config.toml entry itself, not on stderr
        assert "trust-codex-hooks" in out
        toml = tomllib.loads(out)
    else:
        words = shlex.split(out)
        (value,) = [
            words[i + 1].removeprefix("hooks.PreToolUse=")
            for i, w in enumerate(words)
            if w == "-c" and words[i + 1].startswith("hooks.")
        ]
        toml = tomllib.loads(f"PreToolUse = {value}")
        toml = {"hooks": toml}
    (entry,) = toml["hooks"]["PreToolUse"]
    assert entry["matcher"] == "^apply_patch$"
    assert "guard --lead" in entry["hooks"][0]["command"]


def test_a_claude_code_lead_configuration_prints_the_guard_settings(
    project: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    secret = str(tmp_path / "config" / "secret")
    args = ["config", "--project-root", str(project), "--role", "lead", "--secret-file", secret]
    assert main([*args, "--client", "claude-code"]) == 0
    assert "--client claude-code-settings > .claude/settings.local.json" in capsys.readouterr().err
    assert main([*args, "--client", "claude-code-settings"]) == 0
    settings = json.loads(capsys.readouterr().out)
    assert settings["enabledMcpjsonServers"] == ["handoff"]  # the project's server approved
    (entry,) = settings["hooks"]["PreToolUse"]
    assert "guard --lead" in entry["hooks"][0]["command"]
    # The guard reads what a task holds with the secret of the Lead's server: a TASK not as published holds all.
    assert ["--secret-file", secret] == shlex.split(entry["hooks"][0]["command"])[-2:]

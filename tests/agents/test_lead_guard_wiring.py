"""The Lead's own guard, wired as printed. A Claude Code Lead's settings file carries it; a Codex
Lead's runs only once Codex trusts it: `handoff-mcp trust-codex-hooks` trusts the hooks that run this
server's guard (from the printed configuration, or from the plugin), asking Codex itself for their
hashes; after it, a headless `codex exec` with no bypass flag is denied a patch to a path an executor
holds. Before it, the patch lands: the route is what makes the guard run."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.support.agents import agent_env, codex_lead, codex_provider
from tests.support.cli import cli
from tests.support.executor_runs import dispatch, patch
from tests.support.lead_runs import lead_config
from tests.support.model_openai import OpenAIModel
from tests.support.model_server import Text, Turn
from tests.support.wire import SCRIPT

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # the real Codex CLI and server processes


def lead_patches(repo: Path, home: Path, tmp_path: Path) -> bool:
    """A Codex Lead, run with no hook bypass, patches a file into ``src/a1``; whether it landed."""
    landed = repo / "src" / "a1" / "lead.py"
    script: list[Turn] = [[patch("src/a1/lead.py")], [Text("Done.")]]
    with OpenAIModel(script) as model:
        codex_provider(model.url, tmp_path, home)
        run = codex_lead("Edit A1.", repo, agent_env(home, model.url), trust_hooks=False)
    assert run.returncode == 0, run
    told = str(OpenAIModel.outputs(model.main_requests[-1]))
    exists = landed.exists()
    assert exists or "the Lead may not write" in told, told
    landed.unlink(missing_ok=True)
    return exists


def trust(repo: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = agent_env(home, "http://127.0.0.1:9") | {"PATH": f"{Path(cli('codex')).parent}:{agent_env(home, '')['PATH']}"}
    return subprocess.run(
        [str(SCRIPT), "trust-codex-hooks", "--project-root", str(repo)],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


async def test_the_printed_lead_configuration_guards_once_its_hooks_are_trusted(
    repo: Path, secret_file: Path, home: Path, tmp_path: Path
) -> None:
    await dispatch(repo, secret_file)  # an executor holds src/a1/**
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "config.toml").write_text(lead_config(repo, secret_file, "codex"))
    assert lead_patches(repo, home, tmp_path)  # untrusted: Codex does not run the guard
    done = trust(repo, home)
    assert done.returncode == 0, done
    assert done.stdout.startswith("trusted: ")
    assert "guard --lead" in done.stdout
    assert not lead_patches(repo, home, tmp_path)  # trusted: the guard denies


async def test_the_plugins_lead_hook_guards_once_trusted(
    repo: Path, secret_file: Path, home: Path, tmp_path: Path
) -> None:
    await dispatch(repo, secret_file)
    codex, root = cli("codex"), Path(__file__).resolve().parents[2]
    env = agent_env(home, "http://127.0.0.1:9")
    for args in (["plugin", "marketplace", "add", str(root)], ["plugin", "add", "handoff-mcp@handoff-mcp"]):
        added = subprocess.run(
            [codex, *args], cwd=repo, env=env, capture_output=True, text=True, timeout=120, check=False
        )
        assert added.returncode == 0, added.stderr
    assert lead_patches(repo, home, tmp_path)
    done = trust(repo, home)
    assert done.returncode == 0, done
    assert not lead_patches(repo, home, tmp_path)


async def test_the_printed_claude_code_lead_settings_guard_its_edits(repo: Path, secret_file: Path, home: Path) -> None:
    from tests.support.agents import claude_exec
    from tests.support.model_anthropic import AnthropicModel
    from tests.support.model_server import ToolCall

    await dispatch(repo, secret_file)  # an executor holds src/a1/**
    (repo / ".mcp.json").write_text(lead_config(repo, secret_file, "claude-code"))
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.local.json").write_text(lead_config(repo, secret_file, "claude-code-settings"))
    held = ToolCall("Write", {"file_path": str(repo / "src/a1/lead.py"), "content": "VALUE = 1\n"})
    free = ToolCall("Write", {"file_path": str(repo / "docs/lead.md"), "content": "notes\n"})
    with AnthropicModel([[held], [free], [Text("Done.")]]) as model:
        run = claude_exec("claude", "Edit A1.", repo, agent_env(home, model.url), "--permission-mode", "acceptEdits")
    assert run.returncode == 0, run
    results = AnthropicModel.tool_results(model.main_requests[-1])
    assert "the Lead may not write" in results[held.call_id]
    assert not (repo / "src/a1/lead.py").exists()
    assert (repo / "docs/lead.md").read_text() == "notes\n"

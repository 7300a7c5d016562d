"""The real agent CLIs run as a test runs them: a temporary HOME, no user configuration, the scripted
model as their only endpoint, and every run bounded in time.

``claude_exec`` takes the executor's launch line exactly as ``create_task`` printed it (through the
task's sandbox) and adds only what a headless run needs (``-p``, JSON output, the prompt);
``codex_exec`` does the same with the printed ``codex … exec`` line, the scripted model named in
the HOME's ``.codex/config.toml`` (``codex_provider``), which the sandbox copies into the executor's home.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import cli

__all__ = [
    "AgentRun",
    "agent_env",
    "claude_exec",
    "codex_exec",
    "codex_lead",
    "codex_line",
    "codex_provider",
    "write_report_arguments",
]

RUN_BOUND_S = 180  # a CLI that hangs is killed; a scenario takes seconds
DUMMY_KEY = "sk-scripted-model-no-network"
SCRIPTED_MODEL = "scripted-model"


class AgentRun:
    def __init__(self, done: subprocess.CompletedProcess[str]) -> None:
        self.returncode = done.returncode
        self.stdout = done.stdout
        self.stderr = done.stderr

    def __repr__(self) -> str:
        return f"exit {self.returncode}\nstdout: {self.stdout[-3000:]}\nstderr: {self.stderr[-3000:]}"

    def json_lines(self) -> list[dict[str, Any]]:
        found = []
        for line in self.stdout.splitlines():
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, dict):
                found.append(value)
        return found


def agent_env(home: Path, model_url: str) -> dict[str, str]:
    """Only what the CLI needs: PATH, a fresh HOME (and CODEX_HOME in it), the scripted model's URL."""
    home.mkdir(parents=True, exist_ok=True)
    (home / ".codex").mkdir(exist_ok=True)
    # This interpreter's scripts first: where the executor's host has handoff-mcp installed.
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    env = {"PATH": path, "HOME": str(home), "CODEX_HOME": str(home / ".codex")}
    env |= {"ANTHROPIC_BASE_URL": model_url, "ANTHROPIC_API_KEY": DUMMY_KEY, "OPENAI_API_KEY": DUMMY_KEY}
    env |= {"GIT_AUTHOR_NAME": "Executor", "GIT_AUTHOR_EMAIL": "executor@example.invalid"}
    env |= {"GIT_COMMITTER_NAME": "Executor", "GIT_COMMITTER_EMAIL": "executor@example.invalid"}
    env |= {"DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "NO_COLOR": "1"}
    if "XDG_CACHE_HOME" in os.environ:
        env["XDG_CACHE_HOME"] = os.environ["XDG_CACHE_HOME"]
    return env


def _run(command: list[str], cwd: Path, env: dict[str, str], prompt: str = "") -> AgentRun:
    """``command`` run to its end, bounded; ``prompt`` on stdin (never an argument a variadic option
    such as ``--allowedTools`` could swallow)."""
    try:
        done = subprocess.run(
            command,
            cwd=cwd,
            env=env,
            input=prompt,
            capture_output=True,
            text=True,
            timeout=RUN_BOUND_S,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"{command[0]} ran past {RUN_BOUND_S}s: {exc.stdout!r} {exc.stderr!r}")
    return AgentRun(done)


def _with_clis(env: dict[str, str]) -> dict[str, str]:
    """The npm-installed CLIs first on PATH, where a user's are."""
    return env | {"PATH": f"{Path(cli('claude')).parent}{os.pathsep}{env['PATH']}"}


def claude_exec(line: str, prompt: str, cwd: Path, env: dict[str, str], *extra: str) -> AgentRun:
    """Claude Code started with the printed launch text, run by a shell exactly as printed (a launch
    from the team server first exports the token and installs the clone's pre-commit hook), headless:
    ``-p``, JSON output and the other ``extra`` flags added to its last line, the prompt on stdin."""
    headless = ["-p", "--output-format", "json", *extra]
    return _run(["bash", "-c", f"{line} {shlex.join(headless)}"], cwd, _with_clis(env), prompt)


def codex_line(config: dict[str, Any]) -> str:
    """The printed ``codex … exec`` line of an ``executor_config``: its whole command without the prompt."""
    command = str(config["codex_command"])
    prompt_at = command.rfind(" exec ")
    assert prompt_at > 0, command
    return command[: prompt_at + len(" exec")]


def codex_exec(line: str, prompt: str, cwd: Path, env: dict[str, str], *extra: str) -> AgentRun:
    """The printed ``codex … exec`` line run by a shell as printed, with JSON events, ``extra`` flags
    and the prompt added (the model comes from the HOME's config, ``codex_provider``)."""
    return _run(["bash", "-c", f"{line} --json {shlex.join([*extra, prompt])}"], cwd, _with_clis(env))


def codex_catalog(path: Path) -> Path:
    """A model catalog naming the scripted model, for ``model_catalog_json``.

    Codex gives a model the tools its catalog entry lists: a model it does not know gets a shell but
    no ``apply_patch``. The entry is Codex's own (``codex debug models``) for a model whose
    ``apply_patch_tool_type`` is ``freeform``, renamed: so the scripted model is offered
    ``apply_patch`` as a freeform tool, as Codex's own models are. (A custom provider's ``/models`` is
    not asked: with neither the catalog nor a known slug, the tool list has no ``apply_patch``.)
    """
    home = path.parent / "catalog-home"
    home.mkdir(exist_ok=True)
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "CODEX_HOME": str(home)}
    done = subprocess.run(
        [cli("codex"), "debug", "models"], env=env, capture_output=True, text=True, timeout=60, check=True
    )
    models = json.loads(done.stdout)["models"]
    # The plain Responses wire (tools in the request's ``tools``), not the lite one that moves them into ``input``.
    entry = next(m for m in models if m.get("apply_patch_tool_type") == "freeform" and not m.get("use_responses_lite"))
    # Without tool search, Codex lists the MCP tools themselves, as the scripted model calls them.
    entry |= {"slug": SCRIPTED_MODEL, "display_name": SCRIPTED_MODEL, "supports_search_tool": False}
    path.write_text(json.dumps({"models": [entry]}))
    return path


def codex_provider(model_url: str, tmp_path: Path, home: Path) -> None:
    """The scripted model as the user's Codex configuration names it (``home/.codex/config.toml``): the
    provider, its catalog entry, the model. The printed line carries everything else."""
    provider = {"name": "scripted", "base_url": f"{model_url}/v1", "wire_api": "responses", "env_key": "OPENAI_API_KEY"}
    top = [
        f"model = {json.dumps(SCRIPTED_MODEL)}",
        'model_provider = "scripted"',
        f"model_catalog_json = {json.dumps(str(codex_catalog(tmp_path / 'catalog.json')))}",
    ]
    table = ["[model_providers.scripted]", *(f"{key} = {json.dumps(value)}" for key, value in provider.items())]
    config = home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    kept = _without_provider(config.read_text()) if config.exists() else ""  # the user's own entries
    config.write_text("\n".join([*top, "", kept, *table]) + "\n")


def _without_provider(text: str) -> str:
    """``text`` without what ``codex_provider`` wrote before (a model server of another run)."""
    kept, skipping = [], False
    for line in text.splitlines():
        if line.startswith("["):
            skipping = line == "[model_providers.scripted]"
        if not skipping and not line.startswith(("model = ", "model_provider = ", "model_catalog_json = ")):
            kept.append(line)
    return "\n".join(kept)


def codex_lead(prompt: str, cwd: Path, env: dict[str, str], *, trust_hooks: bool = True) -> AgentRun:
    """Codex as the Lead, headless, with the user's configuration (the Lead's server, the scripted model);
    its hooks trusted for this run, or (``trust_hooks=False``) only as the configuration trusts them."""
    flags = ["--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"]
    flags += ["--dangerously-bypass-hook-trust"] if trust_hooks else []
    return _run([cli("codex"), "exec", "--json", *flags, prompt], cwd, env)


def write_report_arguments(dispatch_message: str) -> dict[str, Any]:
    """The JSON arguments line of a dispatch message, as an executor copies it."""
    line = next(line.strip() for line in dispatch_message.splitlines() if line.strip().startswith('{"ref"'))
    return dict(json.loads(line))

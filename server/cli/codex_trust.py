"""``handoff-mcp trust-codex-hooks``: trust, in Codex, the hooks that run this server's guard, and only
those.

Codex runs a hook it does not manage only once trusted: reviewed in its ``/hooks`` screen, or for one
headless run with ``--dangerously-bypass-hook-trust``. Trust persists as a hash per hook in Codex's
``config.toml`` (``[hooks.state."KEY"] trusted_hash``). This asks Codex itself which hooks it sees for
the project and their current hashes (``codex app-server``, ``hooks/list``), picks those whose command
is this server's guard (the Lead's ``guard --lead`` from its printed configuration or the plugin, an
executor's ``hook_process.py``), writes their hashes, and asks Codex again that it now trusts them. A
hook whose command is anything else is never touched; an entry already there with another hash is left
for the person to review in ``/hooks``. Codex's answer is read bounded in time and size.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

from handoff_core.errors import ConfigError
from handoff_core.files.paths import open_root
from handoff_core.files.publishing import replace_whole

__all__ = ["OURS", "trust_codex_hooks"]

ANSWER_BOUND_S = 60.0
MAX_ANSWER = 16 * 1024 * 1024
# A hook is ours when its command runs this server's guard (the console script or the lean hook entry).
OURS = re.compile(r"(?:^|/)handoff-mcp['\"]? guard(?: |$)|/services/evidence/hook_process\.py['\"]? ")
_TRUSTED = ("trusted", "managed")


def _requests(cwd: Path) -> bytes:
    messages: list[dict[str, Any]] = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"clientInfo": {"name": "handoff-mcp", "version": "1"}},
        },
        {"jsonrpc": "2.0", "method": "initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": {"cwds": [str(cwd)]}},
    ]
    return b"".join(json.dumps(message).encode() + b"\n" for message in messages)


def listed_hooks(codex: str, cwd: Path, env: dict[str, str]) -> list[dict[str, Any]]:
    """The hooks Codex sees for ``cwd``, as its app server lists them (key, command, hash, trust)."""
    with subprocess.Popen(
        [codex, "app-server"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=cwd,
    ) as server:
        if server.stdin is None or server.stdout is None:  # pipes were asked for: never so
            raise ConfigError("could not talk to Codex's app server")
        try:
            server.stdin.write(_requests(cwd))
            server.stdin.flush()
            answer = _answer(server.stdout)
        finally:
            server.kill()
            server.wait(timeout=ANSWER_BOUND_S)
    return [hook for entry in answer.get("data", []) for hook in entry.get("hooks", []) if isinstance(hook, dict)]


def _answer(stream: Any) -> dict[str, Any]:
    """The answer to the ``hooks/list`` request, read line by line from the app server, bounded."""
    import select
    import time

    deadline, pending = time.monotonic() + ANSWER_BOUND_S, b""
    fd = stream.fileno()
    while (left := deadline - time.monotonic()) > 0 and len(pending) <= MAX_ANSWER:
        if not select.select([fd], [], [], left)[0] or not (chunk := os.read(fd, 1 << 16)):
            break
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for line in lines:
            message = json.loads(line) if line.strip() else None
            if isinstance(message, dict) and message.get("id") == 2:  # noqa: PLR2004 - the hooks/list request
                if not isinstance(message.get("result"), dict):
                    raise ConfigError(f"Codex did not list its hooks: {str(message.get('error'))[:300]}")
                return dict(message["result"])
    raise ConfigError(f"Codex's app server did not list its hooks within {ANSWER_BOUND_S:g} s; is `codex` installed?")


def _with_trust(config: str, hooks: list[dict[str, Any]]) -> tuple[str, list[str]]:
    """``config`` with a trust entry for each of ``hooks`` it lacks; the keys left for a person to review."""
    state = tomllib.loads(config).get("hooks", {}).get("state", {}) if config.strip() else {}
    added, left = [], []
    for hook in hooks:
        # A plugin's hook lists its own hash, then its plugin's ("sha256:A/sha256:B"): trust is in the first.
        key, digest = str(hook["key"]), str(hook["currentHash"]).split("/", 1)[0]
        if key in state:  # another hash for the same hook: a person decides, in /hooks
            left.append(key)
            continue
        added.append(f"[hooks.state.{json.dumps(key)}]\ntrusted_hash = {json.dumps(digest)}\n")
    text = config + ("\n" if config and not config.endswith("\n") else "") + "".join(f"\n{entry}" for entry in added)
    tomllib.loads(text)  # what Codex will read parses, or nothing is written
    return text, left


def trust_codex_hooks(cwd: Path, codex: str | None = None) -> int:
    found = codex or _codex()
    env = dict(os.environ)
    home = Path(env.get("CODEX_HOME") or Path.home() / ".codex")
    ours = [h for h in listed_hooks(found, cwd, env) if OURS.search(str(h.get("command", "")))]
    if not ours:
        raise ConfigError(
            f"Codex sees no hook of handoff-mcp for {cwd}: print one with handoff-mcp config --client codex "
            "(or add the plugin), then run this again"
        )
    untrusted = [h for h in ours if h.get("trustStatus") not in _TRUSTED]
    if untrusted:
        config_file = home / "config.toml"
        text, left = _with_trust(config_file.read_text() if config_file.exists() else "", untrusted)
        home.mkdir(parents=True, exist_ok=True)
        fd = open_root(home)
        try:
            replace_whole(fd, "config.toml", text.encode(), mode=0o600)
        finally:
            os.close(fd)
        for key in left:
            print(
                f"handoff-mcp: {key} already has a trust entry with another hash: review it in Codex's /hooks",
                file=sys.stderr,
            )
    still = [
        h["key"]
        for h in listed_hooks(found, cwd, env)
        if OURS.search(str(h.get("command", ""))) and h.get("trustStatus") not in _TRUSTED
    ]
    for hook in ours:
        print(
            f"{'untrusted' if hook['key'] in still else 'trusted'}: {hook['key']}: {str(hook.get('command', ''))[:200]}"
        )
    return 1 if still else 0


def _codex() -> str:
    import shutil

    found = shutil.which("codex")
    if found is None:
        raise ConfigError("codex is not on PATH: install it, or name it with --codex PATH")
    return found

"""The agent CLIs the npm clients install, and a command run as a user of them."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

CLIENTS_DIR = Path(__file__).resolve().parents[1] / "clients"


def run(command: list[str], cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "CODEX_HOME": str(home / ".codex")}
    env |= {"DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
    (home / ".codex").mkdir(parents=True, exist_ok=True)
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False)


def cli(name: str) -> str:
    found = CLIENTS_DIR / "node_modules" / ".bin" / name
    if not found.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{name} is not installed in tests/clients: scripts/test installs it with npm ci")
        pytest.skip(f"{name} is not installed (run scripts/test, which installs the npm clients)")
    return str(found)

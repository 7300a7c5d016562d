"""The Lead's client configuration, as printed for a run."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.support.wire import SCRIPT


def lead_config(repo: Path, secret_file: Path, client: str, *extra: str) -> str:
    """What ``handoff-mcp config --role lead`` prints, exactly, run as the person runs it."""
    args = ["config", "--role", "lead", "--client", client, "--project-root", str(repo), *extra]
    done = subprocess.run(
        [str(SCRIPT), *args, "--secret-file", str(secret_file)], capture_output=True, text=True, timeout=60, check=True
    )
    return done.stdout

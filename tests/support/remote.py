"""A clone elsewhere: an executor's machine without the Lead's tree."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import anyio

from tests.support.gitrepo import ENV

BIN = str(Path(sys.executable).parent)


@dataclass
class Elsewhere:
    """The executor's machine: a HOME of its own, a clone of the shared remote, no handoff tree."""

    home: Path
    clone: Path
    bare: Path

    def env(self, token: str = "") -> dict[str, str]:
        path = f"{BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}"
        env = {**ENV, "HOME": str(self.home), "XDG_CACHE_HOME": str(self.home / ".cache"), "PATH": path}
        env.pop("HANDOFF_PROJECT_ROOT", None)
        env.pop("HANDOFF_STATE_ROOT", None)
        return env | ({"HANDOFF_TOKEN": token} if token else {})

    async def sh(self, line: str, token: str = "", stdin: str = "") -> subprocess.CompletedProcess[str]:
        def run() -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                ["sh", "-c", line], cwd=self.clone, env=self.env(token), input=stdin,
                capture_output=True, text=True, timeout=60, check=False,
            )  # fmt: skip

        return await anyio.to_thread.run_sync(run)

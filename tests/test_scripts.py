"""scripts/test's browser step: it says it installs chromium with apt-get as root, and skips without root."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ENSURE = ROOT / "scripts" / "ensure-chromium"
pytestmark = pytest.mark.slow  # runs the script


def bin_dir(tmp_path: Path, *tools: str) -> Path:
    """A PATH holding only ``tools`` (no chromium), plus a stand-in apt-get that records its arguments."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for tool in tools:
        (folder / tool).symlink_to(shutil.which(tool) or tool)
    apt = folder / "apt-get"
    apt.write_text(f'#!/bin/sh\necho "$@" >> {tmp_path / "apt.log"}\n')
    apt.chmod(0o755)
    tmp_path.chmod(0o755)
    return folder


@pytest.mark.skipif(os.getuid() != 0, reason="runs the root branch; needs root")
def test_as_root_it_says_it_installs_debian_chromium_with_apt_get(tmp_path: Path) -> None:
    path = bin_dir(tmp_path, "id")
    done = subprocess.run(
        ["/bin/bash", str(ENSURE)], env={"PATH": str(path)}, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "installing Debian's chromium and fonts-noto-cjk with apt-get, as root" in done.stderr
    assert "install -y -qq chromium" in (tmp_path / "apt.log").read_text()


@pytest.mark.skipif(os.getuid() != 0 or shutil.which("setpriv") is None, reason="drops to nobody with setpriv")
def test_without_root_it_skips_with_a_clear_message_and_installs_nothing(tmp_path: Path) -> None:
    path = bin_dir(tmp_path, "id")
    command = [
        shutil.which("setpriv") or "setpriv",
        "--reuid=65534",
        "--regid=65534",
        "--clear-groups",
        "/bin/bash",
        str(ENSURE),
    ]
    done = subprocess.run(command, env={"PATH": str(path)}, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 3
    assert "skipping the board's browser tests" in done.stderr
    assert "sudo apt-get install chromium" in done.stderr
    assert not (tmp_path / "apt.log").exists()

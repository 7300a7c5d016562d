from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.gitrepo import make_repo


@pytest.fixture
def secret_file(tmp_path: Path) -> Path:
    return tmp_path / "config" / "secret"


@pytest.fixture
def repo(project: Path) -> Path:
    """The project as a git repository with one commit (src/a1/core.py, src/b/other.py, README.md)."""
    make_repo(project)
    return project


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """The agent CLIs' HOME: nothing of the user's configuration leaks in."""
    return tmp_path / "home"

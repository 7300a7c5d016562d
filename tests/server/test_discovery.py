"""Finding the project from a working directory: git is asked the way every git runs here."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from handoff_core.layout import DEFAULT_STATE_ROOT
from server.discovery import find_project
from tests.support.gitrepo import add_worktree, make_repo
from tests.support.hung_git import alive, hang_git


def test_a_git_that_hangs_during_discovery_is_stopped_with_all_it_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started = hang_git(tmp_path, monkeypatch, "--show-toplevel")
    here = tmp_path / "somewhere"
    here.mkdir()
    began = time.monotonic()
    found = find_project(here)
    assert time.monotonic() - began < 8  # the runner's bound (1 s here), not a fixed ten seconds
    assert found.project == here  # git said nothing: the working directory stands
    assert alive(started) == []


def test_a_linked_worktree_finds_the_lead_tree_that_holds_the_state_root(tmp_path: Path) -> None:
    lead = tmp_path / "lead"
    lead.mkdir()
    make_repo(lead)
    (lead / DEFAULT_STATE_ROOT).mkdir(parents=True)
    worker = add_worktree(lead, "task-a")
    found = find_project(worker / "src" / "a1")
    assert found.project.resolve() == lead.resolve()
    assert found.note is not None
    assert "linked worktree" in found.note

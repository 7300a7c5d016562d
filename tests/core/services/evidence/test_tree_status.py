"""The hook's ``git status`` answers as the evidence layer's does, without the subprocess module."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from handoff_core.files import git as files_git
from handoff_core.files.git_config import names_nothing
from handoff_core.layout import REPORT_STATUSES
from handoff_core.services.evidence.stop_check import STATUSES
from handoff_core.services.evidence.tree_status import StatusFailed, changed_paths
from tests.core.evidence.gitrepo import git, make_repo, write


def test_the_stop_hook_names_the_contract_s_statuses() -> None:
    assert STATUSES == REPORT_STATUSES


@pytest.mark.slow
def test_changed_paths_match_the_evidence_layer_s_dirty_paths(tmp_path: Path) -> None:
    make_repo(tmp_path)
    write(tmp_path, "src/a1/core.py", "changed\n")
    write(tmp_path, "new dir/ünïcode file.txt")
    git(tmp_path, "mv", "src/b/other.py", "src/b/renamed.py")
    (tmp_path / "README.md").unlink()
    ours = sorted(changed_paths(str(tmp_path)))
    theirs = sorted(
        (change.status, side)
        for change in files_git.dirty_paths(tmp_path)
        for side in (change.path, change.old_path)
        if side
    )
    assert {path for _, path in ours} == {path for _, path in theirs}
    assert ("?", "new dir/ünïcode file.txt") in ours


@pytest.mark.slow
def test_a_folder_that_is_no_repository_is_an_error_not_a_clean_tree(tmp_path: Path) -> None:
    with pytest.raises(StatusFailed):
        changed_paths(str(tmp_path))


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="giving the repository to another user needs root")
def test_a_repository_another_user_owns_is_an_error_though_its_config_names_nothing(tmp_path: Path) -> None:
    make_repo(tmp_path)
    assert names_nothing(str(tmp_path))  # the listing is skipped: git's own ownership check still refuses
    for path in [tmp_path, *tmp_path.rglob("*")]:
        os.chown(path, 65534, 65534, follow_symlinks=False)
    with pytest.raises(StatusFailed):
        changed_paths(str(tmp_path))

"""A task directory's handle: required and optional reads, publishing, and the archive rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.requests import review
from handoff_core.errors import ChangeNotActive, NotFound, TaskNotFound, WriteConflict
from handoff_core.files.task_dir import Roots, open_task_dir, sha256
from handoff_core.services.writing.store import Store
from tests.support.changes import CHANGE


def test_a_missing_file_is_not_found_and_an_optional_one_is_none(store: Store) -> None:
    ref = store.create_task(review()).ref
    with open_task_dir(store.roots.state_root, ref) as task_dir:
        assert sha256(task_dir.read("TASK.md")) == sha256((store.roots.task_dir(ref) / "TASK.md").read_bytes())
        with pytest.raises(NotFound) as caught:
            task_dir.read("REPORT.md")
        assert caught.value.code == "not_found"
        assert task_dir.read_optional("REPORT.md") is None
        assert not task_dir.has("REPORT.md")


def test_publishing_other_bytes_under_a_taken_name_is_a_conflict_naming_the_task(store: Store) -> None:
    ref = store.create_task(review()).ref
    with open_task_dir(store.roots.state_root, ref) as task_dir:
        assert task_dir.publish("RELEASE.md", b"one\n").created
        assert not task_dir.publish("RELEASE.md", b"one\n").created
        with pytest.raises(WriteConflict) as caught:
            task_dir.publish("RELEASE.md", b"two\n")
    assert str(ref) in caught.value.message
    assert (store.roots.task_dir(ref) / "RELEASE.md").read_bytes() == b"one\n"


def test_an_unknown_task_is_task_not_found(store: Store) -> None:
    ref = store.create_task(review()).ref
    other = type(ref)(ref.change, ref.session, "999-nothing")
    with pytest.raises(TaskNotFound), open_task_dir(store.roots.state_root, other):
        pass


def test_an_archived_change_opens_only_for_reading(store: Store, state_root: Path) -> None:
    ref = store.create_task(review()).ref
    archive = state_root / "specdev" / "archive"
    archive.mkdir(parents=True)
    (state_root / "specdev" / "changes" / CHANGE).rename(archive / CHANGE)
    with pytest.raises(ChangeNotActive), open_task_dir(state_root, ref):
        pass
    with open_task_dir(state_root, ref, active_only=False) as task_dir:
        assert task_dir.facts.location == "archived"


def test_paths_are_shown_relative_to_the_project_when_inside_it(tmp_path: Path) -> None:
    roots = Roots(tmp_path / "p" / "state", tmp_path / "p")
    assert roots.shown(tmp_path / "p" / "state" / "x") == "state/x"
    assert roots.shown(tmp_path / "elsewhere") == str(tmp_path / "elsewhere")

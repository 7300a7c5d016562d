"""The record of the state roots the Lead's secret governs: beside the secret, one per state root and secret."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from handoff_core.errors import StorageError
from handoff_core.services.capabilities.governance import Governance, record_folder
from handoff_core.services.capabilities.tokens import lead_anchor, load_secret, task_anchor

SECRET, OTHER = b"s" * 32, b"o" * 32


def test_a_state_root_is_governed_once_recorded_and_only_for_that_secret_and_root(tmp_path: Path) -> None:
    secret_file, root, elsewhere = tmp_path / "config" / "secret", tmp_path / "p" / "state", tmp_path / "q" / "state"
    anchor = task_anchor(SECRET, root, secret_file)
    assert not anchor.governed
    assert not anchor.governs()
    anchor.govern()
    assert anchor.governs()
    assert task_anchor(SECRET, root, secret_file).governed  # a new reader finds it
    assert not task_anchor(OTHER, root, secret_file).governed  # another secret's key names another record
    assert not task_anchor(SECRET, elsewhere, secret_file).governed
    (record,) = record_folder(secret_file).iterdir()
    assert record.read_text() == f"{root.absolute()}\n"
    assert stat.S_IMODE(record.stat().st_mode) == 0o600
    assert stat.S_IMODE(record_folder(secret_file).stat().st_mode) == 0o700


def test_recording_twice_or_from_two_readers_keeps_the_first_record(tmp_path: Path) -> None:
    secret_file, root = tmp_path / "secret", tmp_path / "state"
    first, second = Governance(secret_file, b"k" * 32, root), Governance(secret_file, b"k" * 32, root)
    first.record()
    second.record()
    first.record()
    assert [p.name for p in record_folder(secret_file).iterdir()] == [first.name]


def test_a_record_that_cannot_be_looked_at_counts_as_there_and_one_that_cannot_be_made_refuses(
    tmp_path: Path,
) -> None:
    secret_file = tmp_path / "secret"
    record_folder(secret_file).write_text("a file where the folder goes\n")
    governance = Governance(secret_file, b"k" * 32, tmp_path / "state")
    assert governance.holds()  # not a "no such file": it cannot decide, so it denies
    with pytest.raises(StorageError) as caught:
        Governance(secret_file, b"j" * 32, tmp_path / "state").record()
    assert "--secret-file" in caught.value.message


def test_a_reader_without_a_secret_has_no_anchor_and_makes_neither(tmp_path: Path) -> None:
    secret_file, project = tmp_path / "config" / "secret", tmp_path / "project"
    project.mkdir()
    assert lead_anchor(secret_file, project, project / "state") is None
    assert not secret_file.exists()
    load_secret(secret_file, project)
    anchor = lead_anchor(secret_file, project, project / "state")
    assert anchor is not None
    assert not anchor.governed
    assert not record_folder(secret_file).exists()

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

import pytest

from handoff_core.errors import UnsafePath
from handoff_core.files.paths import check_name, open_dir, walked


@pytest.mark.parametrize("name", ["", ".", "..", "a/b", "a\\b", "-rf", "C:", "c:x", " a", "a\x00"])
def test_names_that_could_escape_or_mislead_are_refused(name: str) -> None:
    with pytest.raises(UnsafePath) as caught:
        check_name(name)
    assert caught.value.code == "unsafe_path"


@pytest.mark.parametrize("form", ["NFD", "upper"])
def test_a_sibling_differing_only_by_case_or_unicode_form_is_a_collision(tmp_path: Path, form: str) -> None:
    (tmp_path / unicodedata.normalize("NFC", "café")).mkdir()
    other = unicodedata.normalize("NFD", "café") if form == "NFD" else "CAFÉ"
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with pytest.raises(UnsafePath):
            open_dir(fd, other, create=True)
    finally:
        os.close(fd)
    assert len(os.listdir(tmp_path)) == 1


def test_the_walk_refuses_a_symlink_swapped_in_for_a_directory(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "a" / "b").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(UnsafePath), walked(tmp_path, ["a", "b"], create=True):
        pass


def test_the_walk_creates_missing_directories_when_asked(tmp_path: Path) -> None:
    with walked(tmp_path, ["x", "y"], create=True) as fd:
        assert os.listdir(fd) == []
    assert (tmp_path / "x" / "y").is_dir()

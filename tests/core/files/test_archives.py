"""Hostile return archives, each refused before anything is extracted, naming the entry and the rule."""

from __future__ import annotations

import io
import os
import struct
import tempfile
import zipfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from handoff_core.errors import InvalidContent
from handoff_core.files.archives import (
    MAX_SEGMENT_BYTES,
    Limits,
    check_archive,
    deterministic_zip,
    read_checked,
    write_checked,
)
from tests.support.archives import HOSTILE, zip64_local, zip_of


def extract_checked(data: bytes, infos: list[zipfile.ZipInfo], root_fd: int) -> int:
    """Checked entries read, then written below ``root_fd``: how a return is extracted."""
    return write_checked(read_checked(data, infos), root_fd)


def lying_size(data: bytes, declared: int) -> bytes:
    """Lower the uncompressed size every header declares: the data then yields more than it says."""
    out = bytearray(data)
    local = out.find(b"PK\x03\x04")
    struct.pack_into("<L", out, local + 22, declared)
    central = out.find(b"PK\x01\x02")
    struct.pack_into("<L", out, central + 24, declared)
    return bytes(out)


SMALL = Limits(entries=10, entry_bytes=2000, total_bytes=1500, ratio=50)


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_a_hostile_archive_is_refused_naming_the_rule(kind: str) -> None:
    data, rule = HOSTILE[kind]
    limits = SMALL if kind in ("too many entries", "entry too large", "total too large") else Limits(ratio=50)
    with pytest.raises(InvalidContent) as caught:
        check_archive(data, limits)
    assert rule in caught.value.message
    assert "entry" in caught.value.message


def test_the_zip64_archive_of_the_test_has_its_extra_field_only_in_the_local_header() -> None:
    data = zip64_local("a.md", b"x\n")
    info = zipfile.ZipFile(io.BytesIO(data)).infolist()[0]
    assert b"\x01\x00" not in info.extra[:2]  # the central directory is clean: only the local header says ZIP64
    assert data[30 + len("a.md") : 30 + len("a.md") + 2] == b"\x01\x00"


def test_a_long_name_is_refused_by_the_check_not_by_the_file_system(tmp_path: Path) -> None:
    fits = zip_of(("n" * (MAX_SEGMENT_BYTES - 3) + ".md", b"x"))
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert extract_checked(fits, check_archive(fits), fd) == 1  # the longest name allowed is extracted
    finally:
        os.close(fd)
    with pytest.raises(InvalidContent):
        check_archive(zip_of(("n" * (MAX_SEGMENT_BYTES - 2) + ".md", b"x")))


def test_there_are_at_least_twenty_hostile_kinds() -> None:
    assert len(HOSTILE) >= 20


def test_a_size_that_lies_is_refused_and_nothing_is_extracted(tmp_path: Path) -> None:
    data = lying_size(zip_of(("a.txt", b"z" * 5000)), 10)
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with pytest.raises(InvalidContent):  # caught by the check's bounded read, or else by extraction's budget
            extract_checked(data, check_archive(data), fd)
    finally:
        os.close(fd)
    assert list(tmp_path.iterdir()) == []


def test_a_benign_archive_extracts_byte_exact(tmp_path: Path) -> None:
    files = {"RETURN.md": b"# Return\n", "FINDINGS.md": "caf\u00e9 \u2603\n".encode(), "sub/dir/x.py": b"print(1)\n"}
    data = zip_of(*files.items(), ("empty/", b""))
    infos = check_archive(data)
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert extract_checked(data, infos, fd) == sum(len(body) for body in files.values())
    finally:
        os.close(fd)
    for name, body in files.items():
        assert (tmp_path / name).read_bytes() == body
    assert (tmp_path / "empty").is_dir()


def test_the_same_files_make_the_same_bytes_in_any_order() -> None:
    files = [("b.txt", b"2"), ("a/c.txt", b"3"), ("a.txt", b"1")]
    assert deterministic_zip(files) == deterministic_zip(list(reversed(files)))
    assert check_archive(deterministic_zip(files))


NAME_CHARS = st.sampled_from("abcXYZ09._-\u00e9\u2603")  # one, two and three bytes in UTF-8
# Short mixed segments, and runs of one character up to 390 bytes: both sides of every length limit.
SEGMENT = st.text(alphabet=NAME_CHARS, min_size=1, max_size=12) | st.builds(
    lambda char, count: char * count, NAME_CHARS, st.integers(min_value=1, max_value=130)
)


@given(st.lists(SEGMENT, min_size=1, max_size=3))
@settings(max_examples=60)
def test_a_name_the_check_accepts_is_one_the_file_system_takes(segments: list[str]) -> None:
    data = zip_of(("/".join(segments), b"x"))
    try:
        infos = check_archive(data)
    except InvalidContent:
        return  # refused by a rule, naming the entry: never a storage error later
    with tempfile.TemporaryDirectory() as folder:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            assert extract_checked(data, infos, fd) == 1
        finally:
            os.close(fd)

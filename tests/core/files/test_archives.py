"""Hostile return archives, each refused before anything is extracted, naming the entry and the rule."""

from __future__ import annotations

import io
import os
import stat
import struct
import tempfile
import zipfile
from collections.abc import Callable
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


def extract_checked(data: bytes, infos: list[zipfile.ZipInfo], root_fd: int) -> int:
    """Checked entries read, then written below ``root_fd``: how a return is extracted."""
    return write_checked(read_checked(data, infos), root_fd)


def zip_of(*entries: tuple[str, bytes], mode: int = 0o644, method: int = zipfile.ZIP_DEFLATED) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, body in entries:
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = (stat.S_IFREG | mode) << 16 if not name.endswith("/") else (stat.S_IFDIR | 0o755) << 16
            info.compress_type = method
            archive.writestr(info, body)
    return out.getvalue()


def with_info(name: str, body: bytes, change: Callable[[zipfile.ZipInfo], None]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
        info.external_attr = (stat.S_IFREG | 0o644) << 16
        change(info)
        archive.writestr(info, body)
    return out.getvalue()


def patched_name(data: bytes, old: bytes, new: bytes) -> bytes:
    """Rewrite a name in both the local header and the central directory (same length)."""
    assert len(old) == len(new)
    return data.replace(old, new)


def lying_size(data: bytes, declared: int) -> bytes:
    """Lower the uncompressed size every header declares: the data then yields more than it says."""
    out = bytearray(data)
    local = out.find(b"PK\x03\x04")
    struct.pack_into("<L", out, local + 22, declared)
    central = out.find(b"PK\x01\x02")
    struct.pack_into("<L", out, central + 24, declared)
    return bytes(out)


def encrypted(data: bytes) -> bytes:
    """Set the 'encrypted' bit in the local and the central header."""
    out = bytearray(data)
    out[out.find(b"PK\x03\x04") + 6] |= 0x1
    out[out.find(b"PK\x01\x02") + 8] |= 0x1
    return bytes(out)


def zip64_local(name: str, body: bytes) -> bytes:
    """A small entry written with ZIP64 sizes: zipfile puts the ZIP64 extra field in the local header only."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
        info.external_attr = (stat.S_IFREG | 0o644) << 16
        with archive.open(info, "w", force_zip64=True) as stream:
            stream.write(body)
    return out.getvalue()


BOMB = b"\x00" * (8 * 1024 * 1024)
HOSTILE: dict[str, tuple[bytes, str]] = {
    "absolute path": (zip_of(("/etc/passwd", b"x")), "absolute"),
    "drive path": (zip_of(("C:/x.txt", b"x")), "drive"),
    "UNC path": (zip_of(("\\\\host\\share\\x", b"x")), "UNC"),
    "backslash traversal": (zip_of(("a\\..\\..\\x", b"x")), "backslash"),
    "NUL in a name": (patched_name(zip_of(("aXb.txt", b"x")), b"aXb.txt", b"a\x00b.txt"), "NUL"),
    "empty name": (zip_of(("", b"x")), "empty"),
    "dot-dot": (zip_of(("../escape.txt", b"x")), "'..'"),
    "dot-dot inside": (zip_of(("a/../../escape.txt", b"x")), "'..'"),
    "double slash": (zip_of(("a//b.txt", b"x")), "empty segment"),
    "symlink": (
        with_info("link", b"/etc/passwd", lambda i: setattr(i, "external_attr", (stat.S_IFLNK | 0o777) << 16)),
        "symlink",
    ),
    "device": (with_info("dev", b"", lambda i: setattr(i, "external_attr", (stat.S_IFCHR | 0o666) << 16)), "device"),
    "fifo": (with_info("pipe", b"", lambda i: setattr(i, "external_attr", (stat.S_IFIFO | 0o666) << 16)), "FIFO"),
    "setuid": (zip_of(("run.sh", b"#!/bin/sh\n"), mode=0o4755), "setuid"),
    "hard link extra field": (
        with_info("h", b"x", lambda i: setattr(i, "extra", struct.pack("<HH", 0x000D, 4) + b"ab\x00\x00")),
        "extra field 0x000d",
    ),
    "duplicate names": (
        patched_name(zip_of(("dup1.txt", b"1"), ("dup2.txt", b"2")), b"dup2.txt", b"dup1.txt"),
        "duplicate",
    ),
    "case twins": (zip_of(("Readme.md", b"1"), ("README.md", b"2")), "twin"),
    "unicode twins": (zip_of(("caf\u00e9.md", b"1"), ("cafe\u0301.md", b"2")), "twin"),
    "file and directory": (zip_of(("a", b"1"), ("a/b.txt", b"2")), "file and a directory"),
    "too many entries": (zip_of(*((f"f{i}", b"x") for i in range(12))), "entry limit"),
    "entry too large": (zip_of(("big.bin", b"y" * 3000)), "entry limit"),
    "total too large": (zip_of(("a", b"y" * 900), ("b", b"y" * 900)), "in all"),
    "compression bomb": (zip_of(("bomb", BOMB)), "compression bomb"),
    "nested zip by name": (zip_of(("inner.zip", b"not really")), "by its name"),
    "nested gzip by bytes": (zip_of(("data.bin", b"\x1f\x8b\x08\x00rest")), "by its first bytes"),
    "nested zip by bytes": (zip_of(("data.bin", zip_of(("x", b"y")))), "by its first bytes"),
    "nested tar by bytes": (zip_of(("data.bin", b"\x00" * 257 + b"ustar" + b"\x00" * 250)), "by its first bytes"),
    "encrypted": (encrypted(zip_of(("s.txt", b"x"))), "encrypted"),
    "unknown compression": (zip_of(("b.txt", b"x" * 100), method=zipfile.ZIP_BZIP2), "compression method"),
    "prepended data": (b"MZ" + b"\x00" * 62 + zip_of(("a.txt", b"x")), "prepended"),
    "appended data": (zip_of(("a.txt", b"x")) + b"trailing", "after the archive"),
    "not a zip": (b"%PDF-1.7 definitely not", "prepended"),
    "leading dash": (zip_of(("-rf", b"x")), "leading '-'"),
    "ZIP64 in a local header": (zip64_local("a.md", b"x\n"), "ZIP64"),
    "a 255-character name": (zip_of(("n" * 251 + ".md", b"x")), "longer than"),
    "a name 34 segments long": (zip_of(("d/" * 33 + "x.md", b"x")), "32 segments"),
}
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

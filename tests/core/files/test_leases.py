"""Whether a process holds a file open for writing, told by a read lease."""

from __future__ import annotations

import mmap
import os
from pathlib import Path

from handoff_core.files.leases import unwritten
from tests.support.mappings import written_mapping


def unwritten_now(path: Path) -> bool:
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        return unwritten(fd)
    finally:
        os.close(fd)


def test_a_file_nobody_writes_is_unwritten_and_stays_readable_by_others(tmp_path: Path) -> None:
    path = tmp_path / "REPORT.md"
    path.write_bytes(b"Status: completed\n")
    reader = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        shown = mmap.mmap(reader, 0, mmap.MAP_SHARED, mmap.PROT_READ)
        try:
            assert unwritten_now(path)
            assert unwritten_now(path)  # closing the descriptor ended the lease it took
        finally:
            shown.close()
    finally:
        os.close(reader)


def test_a_file_open_for_writing_or_mapped_writable_is_not_unwritten(tmp_path: Path) -> None:
    path = tmp_path / "REPORT.md"
    path.write_bytes(b"Status: completed\n")
    writer = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        assert not unwritten_now(path)
    finally:
        os.close(writer)
    assert unwritten_now(path)
    with written_mapping(path):  # its descriptor closed: the mapping alone keeps the file open for writing
        assert not unwritten_now(path)
    assert unwritten_now(path)


def test_a_descriptor_that_can_write_is_never_taken_for_unwritten(tmp_path: Path) -> None:
    path = tmp_path / "REPORT.md"
    path.write_bytes(b"Status: completed\n")
    fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    try:
        assert not unwritten(fd)  # no read lease on a descriptor opened for writing: it cannot tell
    finally:
        os.close(fd)

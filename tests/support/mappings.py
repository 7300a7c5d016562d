"""A file held open for writing through a shared memory mapping, as an executor's shell can hold one.

A write through such a mapping once its page is dirty moves neither mtime nor ctime: only the
first write to a clean page does. So the mapping below has written once already when it is handed out.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def written_mapping(path: Path) -> Iterator[mmap.mmap]:
    """A shared writable mapping of ``path`` (its descriptor already closed) after one write through it."""
    path.chmod(0o644)
    fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    try:
        mapping = mmap.mmap(fd, 0, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    finally:
        os.close(fd)
    try:
        mapping[0:1] = mapping[0:1]  # the write that dirties the page (and sets ctime, this once)
        yield mapping
    finally:
        mapping.close()


def rewrite_through(mapping: mmap.mmap, old: bytes, new: bytes) -> None:
    """Replace ``old`` by ``new`` (of the same length) in the mapped file, leaving its times as they were."""
    assert len(old) == len(new)
    at = mapping.find(old)
    assert at >= 0
    mapping[at : at + len(old)] = new

"""The state-root lock: one ``flock`` on the state root's directory serialises every writer that
allocates or replaces under it (a dispatch, a leftover removal, a new document, the coordination
choice), so none reads another's change half-way.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from handoff_core.errors import ChangeNotFound

__all__ = ["lock_state_root"]


@contextmanager
def lock_state_root(state_root: Path) -> Iterator[None]:
    """Hold the state-root lock for the block; a missing state root is refused, never made."""
    try:
        fd = os.open(state_root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        raise ChangeNotFound(
            f"the state root {state_root} does not exist: the server never creates it or a change; "
            "create it with a change (specdev/changes/<id>/README.md) or pass the right --state-root"
        ) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the last handle releases the lock

"""Which state roots the Lead's secret governs: a record beside the secret, one per state root.

A TASK stripped of every line a server writes (its anchor, token check and signing key) reads as
one written by hand, and the tree is the executor's to write: whatever the Lead left there to say
"the TASKs here are mine" could be removed with them. So the Lead keeps that fact where its secret
is, out of the executor's reach when it runs as another user: a folder ``<secret>.governs`` beside
the secret file, holding one file per state root the Lead has published an anchored TASK into.
Each is named by an HMAC under that state root's anchor key, so a record speaks for one secret and
one state root only, and none can be named without the secret; it holds the state root's path, for
whoever looks.

The record is made before the first anchored TASK of a state root is published
(``TaskAnchor.govern``), so no anchored TASK exists in a state root its secret does not govern.
It is only ever added: a state root once governed stays so. A record that cannot be looked at
(anything but "no such file") counts as there: a check that cannot decide denies.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from pathlib import Path

from handoff_core.errors import StorageError
from handoff_core.files.publishing import publish

__all__ = ["Governance", "record_folder"]

_CONTEXT = b"handoff-mcp governed state root v1"


def record_folder(secret_file: Path) -> Path:
    """Where the records of ``secret_file`` live: ``<secret>.governs`` beside it."""
    path = Path(secret_file).absolute()
    return path.with_name(f"{path.name}.governs")


class Governance:
    """Whether the secret whose anchor key is ``key`` governs ``state_root``, and the way to record it."""

    def __init__(self, secret_file: Path, key: bytes, state_root: Path) -> None:
        self.folder = record_folder(secret_file)
        self.name = hmac.new(key, _CONTEXT, hashlib.sha256).hexdigest()
        self.state_root = Path(state_root).absolute()
        self._known = False  # once governed, always: asked again only while it is not

    def holds(self) -> bool:
        """Whether the record is there (one lstat while it is not; none once it was seen)."""
        if not self._known:
            try:
                os.lstat(self.folder / self.name)
            except FileNotFoundError:
                return False
            except OSError:  # cannot be looked at: counted as there
                pass
            self._known = True
        return True

    def record(self) -> None:
        """Make the record (write-once; one made by another process first is kept)."""
        if self._known:
            return
        try:
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(self.folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
            try:
                publish(fd, self.name, f"{self.state_root}\n".encode(), mode=0o600, first_wins=True)
            finally:
                os.close(fd)
        except OSError as exc:
            raise StorageError(
                f"cannot record in {self.folder} that the Lead's secret governs {self.state_root}: "
                f"{exc.strerror or exc}; make that folder writable (it sits beside --secret-file), then dispatch again"
            ) from exc
        self._known = True

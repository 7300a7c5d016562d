"""Whether any process holds a file open for writing: what a stat probe cannot see.

A held verdict is kept on its files' stat (``reader``): a write moves
ctime, which nobody can set back. Not so a write through a shared memory mapping: only the first
write to a clean page moves the file's times, and a page stays dirty (on tmpfs, for good) while
the mapping writes on. Such a mapping, like any descriptor that can write, keeps the file open
for writing, and the kernel grants a read lease only when no process does. So a file is read for
holding only after a lease was granted on the descriptor it is read by: a writer that opens it
afterwards moves its ctime with its first write through a mapping, and the probe no longer matches.
A glance (``sightings``) is read without one: it is held only until the judging reads its task again.
"""

from __future__ import annotations

import fcntl
import signal

__all__ = ["unwritten"]

_SETLEASE = getattr(fcntl, "F_SETLEASE", None)  # Linux only: elsewhere nothing is held on what is read
_SETSIG = getattr(fcntl, "F_SETSIG", None)


def unwritten(fd: int) -> bool:
    """Whether no process holds the file of ``fd`` (opened read-only) open for writing now.

    When it holds, ``fd`` keeps a read lease until it is closed (closing ends it: no third call).
    False when it cannot be told (not the file's owner, a file system without leases): what is read
    by it is then judged but never held.
    """
    if _SETLEASE is None or _SETSIG is None:
        return False
    try:
        # A writer opening the file while the lease is held signals its holder: SIGURG (ignored
        # unless handled) rather than SIGIO, whose default ends the process. The writer waits for
        # the close, a read away.
        fcntl.fcntl(fd, _SETSIG, signal.SIGURG)
        fcntl.fcntl(fd, _SETLEASE, fcntl.F_RDLCK)
    except OSError:
        return False
    return True

"""Processes a test leaves behind: the test run adopts every orphan (a Linux child subreaper), so a
grandchild whose parent died, such as a ``git-daemon`` whose ``git`` was killed, is still seen here."""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from pathlib import Path

__all__ = ["adopt_orphans", "left_behind", "stop"]

_PR_SET_CHILD_SUBREAPER = 36
_PROC = Path("/proc")


def adopt_orphans() -> bool:
    """Become the subreaper of every process started below this one; False where the OS has none."""
    if not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    return int(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0


def _stat(pid: str) -> tuple[int, str] | None:
    """(parent pid, state) of a process, or None once it is gone."""
    try:
        text = (_PROC / pid / "stat").read_text()
    except OSError:
        return None
    state, ppid = text.rpartition(")")[2].split()[:2]  # the name, in parentheses, may hold spaces
    return int(ppid), state


def _command(pid: int) -> str:
    try:
        return (_PROC / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return "?"


def left_behind() -> dict[int, str]:
    """This process's living children (zombies are dead already), each with its command line.

    The ``spawn`` pools' resource tracker is stopped first: multiprocessing keeps that one helper for
    the life of the run by design (it ends when its pipe closes), and stopping it reaps it."""
    from multiprocessing import resource_tracker

    getattr(resource_tracker._resource_tracker, "_stop", lambda: None)()  # private: absent, the tracker shows up
    me = os.getpid()
    found = {int(pid): _stat(pid) for pid in os.listdir(_PROC) if pid.isdigit()}
    return {
        pid: _command(pid)
        for pid, stat in found.items()
        if stat is not None and stat == (me, stat[1]) and stat[1] != "Z"
    }


def stop(pids: dict[int, str]) -> None:
    """Kill what was left behind, so that the run itself leaves nothing either."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            continue


def children() -> list[int]:
    """This process's child processes now, from the kernel's own list (every thread's)."""
    found = []
    for thread in os.listdir("/proc/self/task"):
        found += [int(pid) for pid in Path(f"/proc/self/task/{thread}/children").read_text().split()]
    return found

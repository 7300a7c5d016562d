"""A child interpreter of this server's own code, the one way one starts (git has its own, ``git``).

``sys.executable -I``: no environment variable, user site or working directory chooses what it
imports; it is given this process's ``sys.path`` instead (``import_path``: its absolute entries,
never the working directory unless this code was loaded from there), so it runs the very code
this process runs. It is handed what it works on as open descriptors (``pass_fds``: no path
is resolved again) and its question on standard input, runs in a process group of its own, and
answers on standard output within the time it is given or is killed. Its standard streams are
files, never pipes. It is always reaped.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import signal
import subprocess
import sys
import tempfile
from typing import BinaryIO, Final

__all__ = ["Child"]

_BOOT: Final = (
    "import marshal, sys; sys.path[:] = marshal.load(sys.stdin.buffer); from {module} import {function}; {function}()"
)
_SAID: Final = 400  # bytes of a failed child's standard error kept for the log


def import_path() -> list[str]:
    """Where a child imports from: this process's absolute ``sys.path`` entries, the working
    directory left out (a file planted there later must not run in the child) unless it is where
    this code itself was loaded from."""
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    cwd = os.path.realpath(os.getcwd())
    path = [entry for entry in sys.path if isinstance(entry, str) and os.path.isabs(entry)]
    return [here, *(entry for entry in path if entry != here and os.path.realpath(entry) != cwd)]


class Child:
    """A child interpreter running ``module.function()`` on the question it was given."""

    def __init__(self, process: subprocess.Popen[bytes], said: BinaryIO, complained: BinaryIO) -> None:
        self._process = process
        self._said, self._complained = said, complained  # its standard output and error, files of their own
        self.failure = ""  # why ``answer`` gave none

    @classmethod
    def start(cls, entry: tuple[str, str], question: bytes, fds: tuple[int, ...]) -> Child:
        """``entry`` (module, function) started on ``question``; ``OSError`` when it cannot be."""
        if not sys.executable:
            raise FileNotFoundError("this interpreter does not know its own executable")
        module, function = entry
        # Its question and its answers are files, not pipes: neither side ever waits on the other's
        # reading, and the answer is read back a piece at a time, never held whole beside its values.
        said, complained = tempfile.TemporaryFile(), tempfile.TemporaryFile()  # noqa: SIM115  # closed in close()
        try:
            with tempfile.TemporaryFile() as asked:
                asked.write(marshal.dumps(import_path()) + question)
                asked.seek(0)
                process = subprocess.Popen(
                    [sys.executable, "-I", "-c", _BOOT.format(module=module, function=function)],
                    stdin=asked,
                    stdout=said,
                    stderr=complained,
                    pass_fds=fds,
                    start_new_session=True,  # a terminal's interrupt is for the server, which stops it in turn
                )
        except BaseException:
            said.close()
            complained.close()
            raise
        return cls(process, said, complained)

    def answer(self, timeout: float) -> BinaryIO | None:
        """Its standard output, from its start, once it exits 0 within ``timeout`` seconds; None (and
        ``failure``) else. Open until ``close``."""
        try:
            code = self._process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.failure = f"not done in {timeout:.1f} s"
            return None
        if code != 0:
            self._complained.seek(max(0, self._complained.seek(0, os.SEEK_END) - _SAID))
            self.failure = f"exited {code}: {self._complained.read(_SAID).decode('utf-8', 'replace')!r}"
            return None
        self._said.seek(0)
        return self._said

    def close(self, *, group: bool = False) -> None:
        """Kill it if it still runs (with ``group``, every process left in its process group too); reap
        it; close its files."""
        if self._process.poll() is None:
            self._process.kill()
        if group:
            with contextlib.suppress(ProcessLookupError, PermissionError):  # the group is empty: all ended
                os.killpg(self._process.pid, signal.SIGKILL)
        self._process.wait()
        self._said.close()
        self._complained.close()

"""Fault injection for the publish protocol: a stand-in for the ``os`` module publish calls.

In a child process the fault is a crash (``os._exit``: no cleanup runs, as after a power cut);
in-process it is an ``OSError(EIO)`` from the named system call.
"""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any


class FaultyOs:
    def __init__(self, call: str, nth: int, action: str) -> None:
        self.call, self.nth, self.action, self.seen = call, nth, action, 0

    def __getattr__(self, name: str) -> Any:
        real = getattr(os, name)
        if name != self.call:
            return real

        def faulty(*args: Any, **kwargs: Any) -> Any:
            self.seen += 1
            if self.seen != self.nth:
                return real(*args, **kwargs)
            if self.action == "eio":
                raise OSError(errno.EIO, "injected I/O error")
            if self.action == "crash-mid-write":
                fd, data = args
                real(fd, bytes(data[: len(data) // 2]))
                os._exit(17)
            if self.action == "crash-after":
                real(*args, **kwargs)
            os._exit(17)

        return faulty


def install(module: ModuleType, call: str, nth: int, action: str) -> None:
    vars(module)["os"] = FaultyOs(call, nth, action)  # the module's global, looked up at each call


def main() -> None:
    """Child: ``faults.py STATE_ROOT REF CALL NTH ACTION`` writes a report and crashes on cue."""
    from handoff_core.contract.ids import parse_ref
    from handoff_core.files import publishing as publish
    from handoff_core.services.writing.store import Store
    from tests.support.reports import report_for

    state_root, ref, call, nth, action = sys.argv[1:]
    install(publish, call, int(nth), action)
    parsed = parse_ref(ref)
    Store(Path(state_root)).write_report(report_for(parsed), parsed.change)
    sys.exit(0)


if __name__ == "__main__":
    main()

"""The hook as its own process: ``python -I -S …/hook_process.py --ref REF --task-sha256 HEX …``.

Isolated (``-I``) and without ``site`` (``-S``), the interpreter starts at its floor; this file then
puts the folder holding ``handoff_core`` first on the path and runs ``evidence.hook``. Nothing above
that line may import more than the standard library's ``sys`` and ``os``: a failure to start is
answered as a deny (exit 2), never the CLI's non-blocking error.
"""

import os
import sys


def _start() -> int:
    here = os.path.dirname(os.path.realpath(__file__))
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(here))))
    try:
        from handoff_core.services.evidence.hook import main
    except BaseException as exc:
        sys.stderr.write(f"handoff guard: cannot start ({type(exc).__name__}: {exc}); denied\n")
        return 2
    return main()


def _end(code: int) -> None:
    """Exit once the answer is out, without tearing the interpreter down (a few milliseconds on every
    event, for nothing: every file the hook wrote is closed, every git it started waited for)."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        code = code or 2  # the answer may not have reached the CLI: a deny
    os._exit(code)


if __name__ == "__main__":
    _end(_start())

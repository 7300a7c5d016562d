"""The sandbox as its own process: ``python -I -S …/sandbox_process.py --ref REF … -- COMMAND …``.

Isolated (``-I``) and without ``site`` (``-S``), the interpreter starts at its floor, so containing a
launch costs little more than starting it; this file then puts the folder holding ``handoff_core``
first on the path and runs ``containment.launch``, which ends by becoming the command. Nothing above
that line may import more than the standard library's ``sys`` and ``os``: a failure to start is a
refusal (exit 125), never the command run uncontained.
"""

import os
import sys


def _start() -> int:
    here = os.path.dirname(os.path.realpath(__file__))
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(here))))
    try:
        from handoff_core.services.containment.launch import run
    except BaseException as exc:
        sys.stderr.write(f"handoff sandbox: cannot start ({type(exc).__name__}: {exc}); nothing was launched\n")
        return 125
    return run(sys.argv[1:], dict(os.environ))


if __name__ == "__main__":
    sys.exit(_start())

"""The broker as its own process, started by a sandboxed launch outside its sandbox:
``python -I …/broker_process.py --fd N --parent PID --ref=REF --project-root=P --state-root=S
--secret-file=F``, its address and key in ``$HANDOFF_BROKER`` (never on its command line, which
every process may read).

It serves the listening socket it was handed (``--fd``) until the launch's process (``--parent``,
which became the sandboxed command) ends: it watches that process through a pidfd, since the
sandbox keeps the command from signalling anything outside it (its parent-death signal included),
so no broker outlives its executor. Unlike the launch it loads ``site``: publishing needs the
installed packages.
"""

import os
import signal
import sys


def _start() -> int:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # ends through the finally below: the socket closes
    values = sys.argv[1:]
    try:
        parent = os.pidfd_open(int(values[values.index("--parent") + 1]))
    except ProcessLookupError:  # the command ended already: so does the broker
        return 0
    here = os.path.dirname(os.path.realpath(__file__))
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(here))))
    options = dict(arg.partition("=")[::2] for arg in values if arg.startswith("--"))
    import socket
    from pathlib import Path

    from handoff_core.contract.ids import parse_ref
    from handoff_core.files.local_socket import parse_address
    from handoff_core.layout import BROKER_VARIABLE
    from handoff_core.services.containment.broker import Broker, serve

    listener = socket.socket(fileno=int(values[values.index("--fd") + 1]))
    broker = Broker(
        parse_ref(options["--ref"]),
        Path(options["--project-root"]),
        Path(options["--state-root"]),
        Path(options["--secret-file"]),
    )
    _, key = parse_address(os.environ.pop(BROKER_VARIABLE, ""))  # gone: the records it keeps ask no broker
    try:
        serve(listener, broker, key, parent)
    finally:
        listener.close()
    return 0


if __name__ == "__main__":
    sys.exit(_start())

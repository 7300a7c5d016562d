"""The sandbox's system-call filter, met from inside a real launch: what Landlock does not govern and
the filter refuses, on every ABI the machine runs."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest

from handoff_core.files import landlock
from tests.core.services.containment.sandboxing import Project, make_project

pytestmark = [
    pytest.mark.slow,  # each test starts the sandbox and the commands in it
    pytest.mark.skipif(landlock.abi() < 4, reason="the kernel offers no Landlock ABI 4 (Linux 6.7 or later)"),
]

# Inside: connect to the Unix socket at argv[1]; then a connected pair of this process's own.
REACH = (
    "import socket, sys\n"
    "try:\n"
    "    with socket.socket(socket.AF_UNIX) as s: s.connect(sys.argv[1]); print('connected')\n"
    "except OSError as e: print('refused', e.errno)\n"
    "a, b = socket.socketpair(); a.sendall(b'pair'); print(b.recv(4).decode())\n"
)
RING = (
    "import ctypes\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "params = ctypes.create_string_buffer(120)\n"
    "print(libc.syscall(425, 4, params), ctypes.get_errno())\n"
)


@pytest.fixture
def made(tmp_path: Path, project: Path, state_root: Path) -> Project:
    return make_project(tmp_path, project, state_root)


def test_no_unix_socket_a_service_listens_on_outside_the_sandbox_is_reached(made: Project, tmp_path: Path) -> None:
    path = str(tmp_path / "service.sock")  # as the session bus, the user's service manager, a multiplexer
    with socket.socket(socket.AF_UNIX) as service:
        service.bind(path)
        service.listen()
        service.setblocking(False)
        done = made.current().run(sys.executable, "-c", REACH, path)
        assert not _accepted(service), done
    assert done.stdout.split("\n")[:2] == ["refused 13", "pair"], done


def _accepted(listener: socket.socket) -> bool:
    try:
        connection, _ = listener.accept()
    except BlockingIOError:
        return False
    connection.close()
    return True


def test_no_io_uring_ring_is_set_up_inside_the_sandbox(made: Project) -> None:
    done = made.current().run(sys.executable, "-c", RING)
    assert done.stdout.split() == ["-1", "38"], done

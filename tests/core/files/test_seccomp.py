"""The sandbox's system-call filter, met from inside a real launch: what Landlock does not govern and
the filter refuses, on every ABI the machine runs."""

from __future__ import annotations

import ctypes
import json
import os
import select
import socket
import subprocess
import sys
from pathlib import Path
from typing import IO

import pytest

from handoff_core.files import landlock
from tests.support.sandboxing import RUN_BOUND_S, Project, make_project, terminal_controls

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

# A process the executor leaves behind (the launch ends; it lingers, sandboxed, in the shell's session):
# once the shell has its terminal back (argv[1] opens), it asks to be the terminal's foreground, says
# how that went (argv[2]), and if it is, reads what the user types next.
LINGERING = (
    "import fcntl, os, signal, struct, sys, termios\n"
    "if os.fork(): sys.exit(0)\n"
    "os.setpgid(0, 0)\n"
    "for sig in (signal.SIGTTOU, signal.SIGTTIN, signal.SIGHUP): signal.signal(sig, signal.SIG_IGN)\n"
    "open(sys.argv[1]).read()\n"
    "try: fcntl.ioctl(0, termios.TIOCSPGRP, struct.pack('i', os.getpgrp())); outcome = 'foreground'\n"
    "except OSError as e: outcome = f'refused {e.errno}'\n"
    "with open(sys.argv[2], 'w') as done: done.write(outcome)\n"
    "if outcome == 'foreground': os.read(0, 100)\n"
)
# The user's shell: runs the launch (argv[1]: its argv, environment, folder) as its foreground job, takes
# the terminal back when it ends, lets the lingering process try, then reads the user's next line.
SHELL = (
    "import json, os, select, signal, sys\n"
    "argv, env, cwd, go, done = json.loads(sys.argv[1])\n"
    "signal.signal(signal.SIGTTOU, signal.SIG_IGN)\n"
    "job = os.fork()\n"
    "if job == 0:\n"
    "    os.setpgid(0, 0); os.chdir(cwd)\n"
    "    quiet = os.open(os.devnull, os.O_WRONLY); os.dup2(quiet, 1); os.dup2(quiet, 2)\n"
    "    os.execve(argv[0], argv, env)\n"
    "os.setpgid(job, job); os.tcsetpgrp(0, job); os.waitpid(job, 0); os.tcsetpgrp(0, os.getpgrp())\n"
    "with open(go, 'w') as f: f.write('go')\n"
    "with open(done) as f: print(f.read(), flush=True)\n"
    "ready, _, _ = select.select([0], [], [], 20)\n"
    "try: print(os.read(0, 100).decode().strip() if ready else '(nothing)', flush=True)\n"
    "except OSError as e: print('error', e.errno, flush=True)\n"
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


def test_a_process_left_behind_cannot_take_the_terminal_from_the_shell_that_started_the_launch(made: Project) -> None:
    go, done = made.root / "src" / "a1" / "go", made.root / "src" / "a1" / "done"
    os.mkfifo(go)
    os.mkfifo(done)
    launch = made.current()
    argv = launch.argv(sys.executable, "-c", LINGERING, str(go), str(done))
    controller, terminal = os.openpty()
    try:
        shell = subprocess.Popen(
            [sys.executable, "-c", SHELL, json.dumps([argv, launch.env(), str(made.root), str(go), str(done)])],
            stdin=terminal,
            stdout=subprocess.PIPE,
            text=True,
            preexec_fn=terminal_controls,  # noqa: PLW1509 - this test starts no thread
        )
        assert shell.stdout is not None
        outcome = _line(shell.stdout)
        os.write(controller, b"typed by the user\n")
        said = _line(shell.stdout)
        shell.wait(timeout=RUN_BOUND_S)
        shell.stdout.close()
    finally:
        os.close(controller)
        os.close(terminal)
    assert (outcome, said) == ("refused 1", "typed by the user")


def _line(stream: IO[str]) -> str:
    """The next line ``stream`` gives, waiting a bounded time for it."""
    ready, _, _ = select.select([stream], [], [], RUN_BOUND_S)
    assert ready, "no line came"
    return stream.readline().strip()


# Inside: restrict to a Landlock ruleset of ABI 2 (as Linux before 6.2 offers: no truncation right) that
# lets nothing be written, install the filter (argv[2]: for such a Landlock), then truncate argv[1].
OLD_LANDLOCK = (
    "import os, sys\n"
    "from handoff_core.files import landlock, seccomp\n"
    "ruleset = landlock.Ruleset(2, fs=landlock.write_access(2) | landlock.READ_FILE, connect=False, scoped=False)\n"
    "ruleset.allow_path('/', landlock.READ_FILE)\n"
    "ruleset.restrict()\n"
    "seccomp.forbid_outside_reach(truncate=sys.argv[2] == 'old')\n"
    "try: os.truncate(sys.argv[1], 0); print('truncated')\n"
    "except OSError as e: print('refused', e.errno)\n"
)


@pytest.mark.parametrize(("filtered", "said"), [("as-before", "truncated"), ("old", "refused 13")])
def test_where_landlock_does_not_govern_truncation_the_filter_refuses_it(
    tmp_path: Path, filtered: str, said: str
) -> None:
    task = tmp_path / "TASK.md"
    task.write_text("the published TASK\n")
    done = subprocess.run(
        [sys.executable, "-c", OLD_LANDLOCK, str(task), filtered],
        capture_output=True,
        text=True,
        timeout=RUN_BOUND_S,
        check=False,
    )
    assert done.stdout.strip() == said, done
    assert task.read_text() == ("" if said == "truncated" else "the published TASK\n")


# Inside: find the key described by argv[1] in the user's keyring and read it.
KEYRING = (
    "import ctypes, sys\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "key = libc.syscall(250, 10, -4, b'user', sys.argv[1].encode(), 0)\n"  # keyctl(KEYCTL_SEARCH, @u, …)
    "if key < 0: print('refused', ctypes.get_errno()); sys.exit()\n"
    "buffer = ctypes.create_string_buffer(100)\n"
    "size = libc.syscall(250, 11, key, buffer, 100)\n"  # KEYCTL_READ
    "print(buffer.raw[:size].decode())\n"
)


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the test calls keyctl by its x86-64 number")
def test_the_users_kernel_keyring_is_out_of_reach(made: Project) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    name = f"handoff-test-{os.getpid()}"
    key = libc.syscall(248, b"user", name.encode(), b"a kerberos ticket", 17, -4)  # add_key to @u
    assert key > 0, ctypes.get_errno()
    try:
        done = made.current().run(sys.executable, "-c", KEYRING, name)
    finally:
        libc.syscall(250, 21, key)  # KEYCTL_INVALIDATE
    assert "kerberos" not in done.stdout, done
    assert done.stdout.strip() == "refused 13", done

"""One acceptance check replayed inside the kernel's sandbox, by a supervisor process of its own.

``verify_task`` starts this module as a child interpreter (``files.interpreter``), never in the
server, once per check. The supervisor stays outside the sandbox and single-threaded, so it can fork
safely: the child restricts itself to the replay's grants (``replay_grants``: its scratch copy and
a private temporary folder writable, every other path read-only, the Lead's secret and the user's
push credentials unreadable, no TCP connect at all) and the launch's terminal filter, then becomes
``/bin/sh -c RUN``. The supervisor is its subreaper: when the check exits, runs past its time or
writes more than ``CHECK_MAX_OUTPUT`` bytes, every process it left, in whatever session or group,
is killed before the answer is given. The check's standard output and error share one pipe, of
which the last ``CHECK_TAIL_BYTES`` are kept. Landlock scopes the check's signals to its own
domain (ABI 6), so it cannot stop its supervisor. Where the kernel cannot deny network connections
(Landlock before ABI 4) nothing is run: the answer says why. Stdlib only.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import marshal
import os
import select
import signal
import sys
import time

from handoff_core.files import landlock, seccomp
from handoff_core.layout import CHECK_MAX_OUTPUT, CHECK_TAIL_BYTES
from handoff_core.services.containment.grants import CREDENTIAL_VARIABLES, PUSH_CREDENTIALS, Grant, Grants
from handoff_core.services.containment.launch import contained_ruleset

__all__ = ["NETWORK_ABI", "replay_grants", "supervise"]

NETWORK_ABI = 4  # the first Landlock ABI that handles TCP connects
_PR_SET_CHILD_SUBREAPER = 36
# What a check writes outside its copy: a sink, a pseudo-terminal (pty-driven tests), shared memory
# (multiprocessing's semaphores). A check has no terminal: its streams are a pipe and /dev/null.
_DEVICES = ("null", "zero", "full", "ptmx", "pts", "shm")
_SHELL = "/bin/sh"
_START_FAILED = 126  # as a shell says a command could not be run
_SWEEPS = 1000  # rounds of killing the processes a check left (each round reaps what it killed)
_DRAIN_S = 2.0  # after the sweep, the pipe's last bytes are read this long at most


def replay_grants(scratch: str, private: str, secret_file: str, user_home: str) -> Grants:
    """Write only in the scratch copy and the private folder (and the devices a check needs); read
    everything but the Lead's secret and the user's push credentials; connect nowhere."""
    write = [Grant(scratch, (), "the check's scratch copy"), Grant(private, (), "its private home and temp")]
    write += [Grant("/dev", (device,), "a device a check needs") for device in _DEVICES]
    home = os.path.realpath(user_home)
    denied = [os.path.realpath(secret_file), *(os.path.join(home, c) for c in PUSH_CREDENTIALS)]
    return Grants(
        write=tuple(write),
        read_denied=tuple(dict.fromkeys(path for path in denied if os.path.lexists(path))),
        connect=(),  # handled, and no port allowed
        notes=(),
        drop_env=CREDENTIAL_VARIABLES,
    )


def _refusal(why: str) -> dict[str, object]:
    return {"refused": why}


def _ruleset(question: dict[str, object]) -> landlock.Ruleset | str:
    """The check's ruleset, or why the kernel cannot contain it as a replay must be."""
    version = landlock.abi()
    if version == 0:
        return "this kernel offers no Landlock (Linux 5.13 or later, enabled at boot): no check was run"
    if version < NETWORK_ABI:
        return (
            f"this kernel's Landlock (ABI {version}) cannot deny network connections (ABI {NETWORK_ABI}, Linux 6.7 "
            "or later): no check was run"
        )
    grants = replay_grants(
        str(question["scratch"]), str(question["private"]), str(question["secret_file"]), str(question["user_home"])
    )
    return contained_ruleset(version, grants)[0]


def _child(question: dict[str, object], ruleset: landlock.Ruleset, write_end: int) -> None:
    """In the forked child: the streams, the folder, the sandbox, then the shell. Never returns."""
    try:
        quiet = os.open(os.devnull, os.O_RDONLY)
        os.dup2(quiet, 0)
        os.dup2(write_end, 1)
        os.dup2(write_end, 2)
        os.chdir(str(question["cwd"]))
        ruleset.restrict()
        seccomp.forbid_outside_reach()
        given = question.get("env")
        env = {str(k): str(v) for k, v in given.items()} if isinstance(given, dict) else {}
        os.execve(_SHELL, [_SHELL, "-c", str(question["run"])], env)  # noqa: S606 - the check's own line
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.write(2, f"handoff replay: the check could not start: {exc}\n".encode())
    os._exit(_START_FAILED)


def _children() -> list[int]:
    """This process's children now (orphans of the check come here: it is their subreaper)."""
    me = os.getpid()
    try:
        with open(f"/proc/self/task/{me}/children", "rb") as listing:
            return [int(pid) for pid in listing.read().split()]
    except OSError:
        pass
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError), open(f"/proc/{name}/stat", "rb") as stat:
                if int(stat.read().rsplit(b")", 1)[1].split()[1]) == me:
                    found.append(int(name))
    return found


def _sweep() -> None:
    """Kill every process the check left, round by round: a killed process's children come here next."""
    for _ in range(_SWEEPS):
        left = _children()
        if not left:
            return
        for pid in left:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for pid in left:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)


def _read_into(fd: int, tail: bytearray) -> int:
    """One read of the pipe into ``tail`` (its end kept); the bytes read, 0 at its end."""
    try:
        chunk = os.read(fd, 1 << 16)
    except BlockingIOError:
        return -1
    tail += chunk
    del tail[: max(0, len(tail) - CHECK_TAIL_BYTES)]
    return len(chunk)


def _watch(pid: int, read_end: int, timeout: float) -> dict[str, object]:
    """Wait for the check within ``timeout``, reading its output; the facts of how it ended."""
    start = time.monotonic()
    deadline = start + timeout
    pidfd = os.pidfd_open(pid)
    poller = select.poll()
    poller.register(read_end, select.POLLIN)
    poller.register(pidfd, select.POLLIN)
    tail, total, status, why = bytearray(), 0, None, ""
    while status is None and not why:
        left = deadline - time.monotonic()
        if left <= 0:
            why = "timed_out"
            break
        for fd, _ in poller.poll(max(1, int(left * 1000))):
            if fd == read_end:
                got = _read_into(read_end, tail)
                total += max(got, 0)
                if got == 0:
                    poller.unregister(read_end)  # every writer closed it; the check may still run
                elif total > CHECK_MAX_OUTPUT:
                    why = "over_output"
            elif fd == pidfd:
                status = os.waitpid(pid, 0)[1]
    seconds = round(time.monotonic() - start, 3)
    os.close(pidfd)
    if status is None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        status = os.waitpid(pid, 0)[1]
    _sweep()
    total += _drain(read_end, tail)
    code = os.waitstatus_to_exitcode(status)
    return {
        "exit": code,
        "seconds": seconds,
        "why": why,
        "output_bytes": total,
        "tail": bytes(tail).decode("utf-8", "replace"),
    }


def _drain(fd: int, tail: bytearray) -> int:
    """What the pipe still holds once every writer is gone, within ``_DRAIN_S``."""
    os.set_blocking(fd, False)
    total, deadline = 0, time.monotonic() + _DRAIN_S
    while time.monotonic() < deadline:
        if not select.select([fd], [], [], max(0.0, deadline - time.monotonic()))[0]:
            break
        got = _read_into(fd, tail)
        if got <= 0:
            break
        total += got
    return total


def supervise(question: dict[str, object]) -> dict[str, object]:
    """Run one check as ``question`` says (run, cwd, timeout_s, scratch, private, secret_file, user_home,
    env); how it ended, or why it was not run."""
    if not sys.platform.startswith("linux"):
        return _refusal("a check is replayed only on Linux (Landlock): no check was run")
    try:
        ruleset = _ruleset(question)
    except landlock.LandlockUnavailable as exc:
        return _refusal(f"the kernel refused the sandbox ({exc.strerror}): no check was run")
    except OSError as exc:
        return _refusal(f"cannot draw the sandbox ({exc}): no check was run")
    if isinstance(ruleset, str):
        return _refusal(ruleset)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        return _refusal("cannot become the check's subreaper: no check was run")
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        _child(question, ruleset, write_end)
    os.close(write_end)
    ruleset.close()
    try:
        timeout = question["timeout_s"]
        return _watch(pid, read_end, float(timeout) if isinstance(timeout, int | float) else 0.0)
    finally:
        os.close(read_end)


def main() -> None:
    """The child interpreter's entry: the question (marshal, after the import path) on standard input, the
    answer (JSON) on standard output."""
    question = marshal.load(sys.stdin.buffer)  # noqa: S302 - from the server that started it
    answer = supervise(question) if isinstance(question, dict) else _refusal("the question is not an object")
    sys.stdout.write(json.dumps(answer))
    sys.stdout.flush()

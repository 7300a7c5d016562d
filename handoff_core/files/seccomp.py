"""The system-call filter a sandboxed launch carries, for what Landlock does not govern:

- no ``TIOCSTI`` or ``TIOCLINUX`` on any terminal: Landlock does not govern a terminal the launch
  inherited, and either request would let a contained process type a command into the shell that
  started it, which runs it outside the sandbox once the executor ends (bubblewrap filters the same
  two); nor ``TIOCSPGRP``, with which a process left behind takes that terminal back from the shell
  once the launch ends and reads what the user types next (a shell in the sandbox then runs without
  job control). ``ioctl`` takes its request as 32 bits, so the filter compares the low 32 bits,
  whatever a caller puts above them;
- no Unix socket made (``socket(AF_UNIX, …)``, and the 32-bit ``socketcall`` that hides its
  arguments): Landlock does not govern connecting to one by its path, and every service the user
  runs listens on one (the session bus and the user's service manager start programs outside any
  sandbox; terminal multiplexers type into their panes; another task's broker). A pair of connected
  sockets (``socketpair``) reaches nothing outside and stays allowed;
- no ``io_uring`` (``ENOSYS``, as a kernel without it answers): its rings make sockets without a
  system call the filter can see;
- no kernel keyring (``keyctl``, ``add_key``, ``request_key``): Landlock does not govern it, and the
  user's keyring holds what logins put there (Kerberos tickets among them);
- where Landlock is older than ABI 3 (Linux before 6.2), which does not govern truncation, no
  ``truncate(2)`` by path: with it a contained process emptied any file the user may write (its
  TASK, git's configuration, the Lead's secret). Truncating what it opened for writing stays allowed.

A process that switches to its machine's other ABIs (x32, 32-bit) meets the same filter. Stdlib only
(``ctypes``, ``struct``).
"""

from __future__ import annotations

import ctypes
import os
import struct

__all__ = ["FilterUnavailable", "forbid_outside_reach"]

_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 22, 2
_TIOCSTI, _TIOCLINUX, _TIOCSPGRP, _AF_UNIX = 0x5412, 0x541C, 0x5410, 1
_ALLOW, _ERRNO = 0x7FFF0000, 0x00050000
_EPERM, _EACCES, _ENOSYS = 1, 13, 38
_LD_ABS, _JEQ, _RET = 0x20, 0x15, 0x06
_ARCH, _NR = 4, 0  # seccomp_data: nr, arch, then the ip and six 64-bit arguments (low half first)
_X32 = 0x40000000


def _arg(index: int) -> int:
    return 16 + 8 * index


# One ABI's rules: (system call number, argument offset or None, the values refused, errno).
_Rules = tuple[tuple[int, int | None, tuple[int, ...], int], ...]


class _Calls:
    """One ABI's numbers of the system calls the filter refuses (``socketcall``: the 32-bit x86 ABI only)."""

    def __init__(self, ioctl: int, socket: int, io_uring_setup: int, keys: int, truncate: tuple[int, ...]) -> None:
        self.ioctl, self.socket, self.io_uring_setup = ioctl, socket, io_uring_setup
        self.keys = (keys, keys + 1, keys + 2)  # add_key, request_key, keyctl: consecutive on every ABI
        self.truncate, self.socketcall = truncate, -1

    def with_socketcall(self, number: int) -> _Calls:
        self.socketcall = number
        return self

    def rules(self, truncate: bool) -> _Rules:
        rules: _Rules = (
            (self.ioctl, _arg(1), (_TIOCSTI, _TIOCLINUX, _TIOCSPGRP), _EPERM),
            (self.socket, _arg(0), (_AF_UNIX,), _EACCES),
            (self.io_uring_setup, None, (), _ENOSYS),
        )
        rules += tuple((number, None, (), _EACCES) for number in self.keys)
        rules += ((self.socketcall, None, (), _EACCES),) if self.socketcall >= 0 else ()
        return rules + (tuple((number, None, (), _EACCES) for number in self.truncate) if truncate else ())


# Per machine: (audit arch, its calls) for each ABI a process of it can call.
_ABIS: dict[str, tuple[tuple[int, _Calls], ...]] = {
    "x86_64": (
        (0xC000003E, _Calls(16, 41, 425, 248, (76,))),
        (0xC000003E, _Calls(16 | _X32, 41 | _X32, 425 | _X32, 248 | _X32, (76 | _X32,))),
        (0x40000003, _Calls(54, 359, 425, 286, (92, 193)).with_socketcall(102)),
    ),
    "aarch64": ((0xC00000B7, _Calls(29, 198, 425, 217, (45,))), (0x40000028, _Calls(54, 281, 425, 309, (92, 193)))),
}
_Code = list[tuple[int, int, int, int]]


def _refusal(number: int, offset: int | None, values: tuple[int, ...], errno: int) -> _Code:
    """Where the loaded number is ``number``: refuse (those of its ``values`` at ``offset``); else skip."""
    body: _Code = [(_RET, 0, 0, _ERRNO | errno)]
    if offset is not None:
        count = len(values)
        compares = [(_JEQ, count - at, 0, value) for at, value in enumerate(values)]  # each to the refusal
        body = [(_LD_ABS, 0, 0, offset), *compares, (_RET, 0, 0, _ALLOW), *body]
    return [(_JEQ, 0, len(body), number), *body]


def _program(abis: tuple[tuple[int, _Rules], ...]) -> bytes:
    """Per ABI: load the arch and skip the block unless it matches; load the number, and for each rule
    refuse or skip to the next; allow what no rule names. A jump's offset counts from the next
    instruction."""
    code: _Code = []
    for arch, rules in abis:
        block: _Code = [(_LD_ABS, 0, 0, _NR)]
        for rule in rules:
            block += _refusal(*rule)
        block.append((_RET, 0, 0, _ALLOW))
        code += [(_LD_ABS, 0, 0, _ARCH), (_JEQ, 0, len(block), arch), *block]
    code.append((_RET, 0, 0, _ALLOW))
    return b"".join(struct.pack("HBBI", *instruction) for instruction in code)


class FilterUnavailable(OSError):
    """The kernel refused the filter, or this machine's system calls are not known here."""


def forbid_outside_reach(truncate: bool = False) -> None:
    """Install the filter on the calling thread (inherited by all it starts; no_new_privs must be set);
    ``truncate``: refuse ``truncate(2)`` too (Landlock before ABI 3)."""
    machine = os.uname().machine  # not platform: it costs a launch several milliseconds to import
    abis = _ABIS.get(machine)
    if abis is None:
        raise FilterUnavailable(0, f"the sandbox's filter knows no system calls of {machine}")
    code = _program(tuple((arch, calls.rules(truncate)) for arch, calls in abis))
    buffer = ctypes.create_string_buffer(code, len(code))
    program = struct.pack("HxxxxxxP", len(code) // 8, ctypes.addressof(buffer))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.c_char_p(program), 0, 0) != 0:
        errno = ctypes.get_errno()
        raise FilterUnavailable(errno, os.strerror(errno))

"""The one system-call filter a sandboxed launch carries: no ``TIOCSTI`` or ``TIOCLINUX`` on any
terminal. Landlock does not govern a terminal the launch inherited, and either request would let a
contained process type a command into the shell that started it, which runs it outside the sandbox
once the executor ends (bubblewrap filters the same two). ``ioctl`` takes its request as 32 bits, so
the filter compares the low 32 bits, whatever a caller puts above them; a process that switches to
its machine's 32-bit system calls meets the same filter. Stdlib only (``ctypes``, ``struct``).
"""

from __future__ import annotations

import ctypes
import os
import struct

__all__ = ["FilterUnavailable", "forbid_terminal_injection"]

_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 22, 2
_TIOCSTI, _TIOCLINUX = 0x5412, 0x541C
_ALLOW, _EPERM = 0x7FFF0000, 0x00050000 | 1
_LD_ABS, _JEQ, _RET = 0x20, 0x15, 0x06
_ARCH, _NR, _REQUEST = 4, 0, 24  # seccomp_data: nr, arch, then the ip and six arguments; the request is args[1]
_X32 = 0x40000000
# Per machine: (audit arch, the ioctl system call's number) for each ABI a process of it can call.
_IOCTL = {
    "x86_64": ((0xC000003E, 16), (0xC000003E, 16 | _X32), (0x40000003, 54)),
    "aarch64": ((0xC00000B7, 29), (0x40000028, 54)),
}


class FilterUnavailable(OSError):
    """The kernel refused the filter, or this machine's system calls are not known here."""


def _program(pairs: tuple[tuple[int, int], ...]) -> bytes:
    """Deny the two requests for each (arch, ioctl number); allow everything else. Each block: load
    the arch, skip the block unless it matches; load the number, skip unless it matches; load the
    request, jump to the deny on either; a jump's offset counts from the next instruction."""
    block = 7
    deny = len(pairs) * block + 1  # after every block, then the allow
    code: list[tuple[int, int, int, int]] = []
    for arch, number in pairs:
        at = len(code)
        code += [(_LD_ABS, 0, 0, _ARCH), (_JEQ, 0, 5, arch), (_LD_ABS, 0, 0, _NR), (_JEQ, 0, 3, number)]
        code += [(_LD_ABS, 0, 0, _REQUEST)]
        code += [(_JEQ, deny - (at + 6), 0, _TIOCSTI), (_JEQ, deny - (at + 7), 0, _TIOCLINUX)]
    code += [(_RET, 0, 0, _ALLOW), (_RET, 0, 0, _EPERM)]
    return b"".join(struct.pack("HBBI", *instruction) for instruction in code)


def forbid_terminal_injection() -> None:
    """Install the filter on the calling thread (inherited by all it starts; no_new_privs must be set)."""
    machine = os.uname().machine  # not platform: it costs a launch several milliseconds to import
    pairs = _IOCTL.get(machine)
    if pairs is None:
        raise FilterUnavailable(0, f"the terminal filter knows no system calls of {machine}")
    code = _program(pairs)
    buffer = ctypes.create_string_buffer(code, len(code))
    program = struct.pack("HxxxxxxP", len(code) // 8, ctypes.addressof(buffer))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.c_char_p(program), 0, 0) != 0:
        errno = ctypes.get_errno()
        raise FilterUnavailable(errno, os.strerror(errno))

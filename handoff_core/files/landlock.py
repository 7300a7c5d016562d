"""Linux Landlock: an unprivileged process gives up, for itself and every process it starts, each
file-system access it does not list (and, from ABI 4, every TCP connect to a port it does not list).

This module is the kernel's interface only: which ABI the kernel offers, a ruleset built rule by rule
from directory handles, and the one-way restriction of the calling thread. What a task's executor
may do is decided in ``services/containment``. Rules are added from handles opened with
``O_PATH | O_NOFOLLOW``: a rule never follows a symbolic link, so a link planted where a rule is
drawn is ruled itself, not its target. Stdlib only (``ctypes``), loaded only by the sandbox.
"""

from __future__ import annotations

import ctypes
import os
import stat
import sys

__all__ = [
    "DEVICE_ACCESS",
    "FILE_ONLY",
    "READ_FILE",
    "WRITE_ACCESS",
    "LandlockUnavailable",
    "Ruleset",
    "abi",
    "write_access",
]

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446  # the same numbers on every architecture
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH, _RULE_NET_PORT = 1, 2
_PR_SET_NO_NEW_PRIVS = 38

# File-system access rights (include/uapi/linux/landlock.h) and the ABI that introduced each.
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER, TRUNCATE = 1 << 13, 1 << 14  # ABI 2, ABI 3
CONNECT_TCP = 1 << 1  # a network right, ABI 4
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1  # ABI 6

WRITE_ACCESS = (
    WRITE_FILE
    | REMOVE_DIR
    | REMOVE_FILE
    | MAKE_CHAR
    | MAKE_DIR
    | MAKE_REG
    | MAKE_SOCK
    | MAKE_FIFO
    | MAKE_BLOCK
    | MAKE_SYM
)
FILE_ONLY = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE  # the rights a rule on a file (not a folder) may hold
DEVICE_ACCESS = WRITE_FILE | READ_FILE | TRUNCATE


class LandlockUnavailable(OSError):
    """The kernel refused a Landlock call: no Landlock, or a rule it cannot take."""


class _RulesetAttr(ctypes.Structure):
    _fields_ = (("fs", ctypes.c_uint64), ("net", ctypes.c_uint64), ("scoped", ctypes.c_uint64))


class _PathBeneath(ctypes.Structure):
    _pack_ = 1  # the kernel's struct is packed: 12 bytes
    _fields_ = (("allowed", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


class _NetPort(ctypes.Structure):
    _fields_ = (("allowed", ctypes.c_uint64), ("port", ctypes.c_uint64))


_libc: ctypes.CDLL | None = None


def _syscall(number: int, *args: object) -> int:
    global _libc  # noqa: PLW0603 - one handle on libc per process, made on first use
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
        _libc.syscall.restype = ctypes.c_long
    result = int(_libc.syscall(ctypes.c_long(number), *args))
    if result < 0:
        errno = ctypes.get_errno()
        raise LandlockUnavailable(errno, os.strerror(errno))
    return result


def abi() -> int:
    """The Landlock ABI this kernel offers; 0 where it offers none (not Linux, too old, disabled)."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        return _syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    except (LandlockUnavailable, OSError, AttributeError):
        return 0


def write_access(version: int) -> int:
    """Every right that writes, as far as ABI ``version`` can name it."""
    return WRITE_ACCESS | (REFER if version >= 2 else 0) | (TRUNCATE if version >= 3 else 0)  # noqa: PLR2004


class Ruleset:
    """A ruleset being drawn: what it handles is denied unless a rule allows it."""

    def __init__(self, version: int, *, fs: int, connect: bool, scoped: bool) -> None:
        self.version = version
        self.fs = fs
        net = CONNECT_TCP if connect and version >= 4 else 0  # noqa: PLR2004 - ABI 4: TCP
        scope = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if scoped and version >= 6 else 0  # noqa: PLR2004
        attr = _RulesetAttr(fs, net, scope)
        size = 24 if version >= 6 else 16 if version >= 4 else 8  # noqa: PLR2004 - the struct grew by ABI
        self.handles_connect = bool(net)
        self.fd = _syscall(_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))

    def allow_path(self, path: str, access: int, folder: bool | None = None) -> bool:
        """Allow ``access`` beneath ``path`` (a file: the file-only part; ``folder`` says which when the
        caller knows); never through a symlink. False when the path does not exist."""
        try:
            fd = os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            return False
        try:
            self.allow_handle(fd, access, folder)
        finally:
            os.close(fd)
        return True

    def allow_handle(self, fd: int, access: int, folder: bool | None = None) -> None:
        if folder is None:
            folder = stat.S_ISDIR(os.fstat(fd).st_mode)
        allowed = access & self.fs if folder else access & self.fs & FILE_ONLY
        if allowed:
            rule = _PathBeneath(allowed, fd)
            _syscall(_ADD_RULE, ctypes.c_int(self.fd), ctypes.c_int(_RULE_PATH_BENEATH), ctypes.byref(rule), 0)

    def allow_connect(self, port: int) -> None:
        if self.handles_connect:
            rule = _NetPort(CONNECT_TCP, port)
            _syscall(_ADD_RULE, ctypes.c_int(self.fd), ctypes.c_int(_RULE_NET_PORT), ctypes.byref(rule), 0)

    def restrict(self) -> None:
        """Restrict the calling thread, and all it starts from now on, to this ruleset. One way."""
        if _libc is None or _libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            errno = ctypes.get_errno()
            raise LandlockUnavailable(errno, f"no_new_privs refused: {os.strerror(errno)}")
        _syscall(_RESTRICT_SELF, ctypes.c_int(self.fd), ctypes.c_uint32(0))

    def close(self) -> None:
        os.close(self.fd)

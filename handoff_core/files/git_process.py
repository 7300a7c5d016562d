"""Git as a subprocess, the one way git runs here: a fixed environment, its own process group,
bounded in time and output, ``-z`` output parsed (never a path quoted or split on spaces).

The environment is the repository's own facts only: no system or global configuration, no hooks,
no pager, no prompt, no external diff or text conversion, ``core.quotePath=false``, no transport and
no lazy fetch, for git and every git it starts (``git_config.ENVIRONMENT``); ``GIT_*`` variables of
the caller (a hook's ``GIT_DIR``/``GIT_INDEX_FILE`` aside, see ``run``) are dropped. A command that
could start a filter runs with the drivers the repository's config names neutralised (``planted``).
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping
from itertools import repeat
from pathlib import Path
from typing import NamedTuple, cast

from handoff_core.errors import GitError
from handoff_core.files.git_config import (
    CONFIG_LISTING,
    ENVIRONMENT,
    FIXED,
    USER_LEVEL_DROPPED,
    names_nothing,
    overrides,
)

__all__ = [
    "KEPT",
    "MAX_OUTPUT",
    "TIMEOUT",
    "Change",
    "Running",
    "environment",
    "fields",
    "name_status",
    "planted",
    "results",
    "run",
    "start",
]

TIMEOUT = 20.0
MAX_OUTPUT = 64 * 1024 * 1024
_CONFIG = tuple(arg for key, value in FIXED for arg in ("-c", f"{key}={value}"))
_USER_CONFIG = tuple(arg for key, value in FIXED if key not in USER_LEVEL_DROPPED for arg in ("-c", f"{key}={value}"))
_NAMING = ("status", "diff", "diff-files", "diff-index", "ls-files", "update-index")
_TWO_SIDED = ("R", "C")  # a rename's or copy's status: two paths follow it
KEPT = ("GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES")


class Change(NamedTuple):
    status: str  # A, C, D, M, R, T, U, X (git's letters; ? for untracked)
    path: str
    old_path: str | None = None  # the other side of a rename or copy


def environment(keep: Mapping[str, str] | None, user_config: bool = False) -> dict[str, str]:
    """The fixed environment; with ``user_config`` the caller's configuration levels stay (system,
    global, ``GIT_CONFIG_*``): to ask where git itself will look, as the user's own git would."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or (user_config and "_CONFIG" in k)}
    env |= {k: v for k, v in ENVIRONMENT.items() if not (user_config and "_CONFIG" in k)}
    return env | {"GIT_PAGER": "cat", "PAGER": "cat"} | dict(keep or {})


class Running:
    """A git process started by ``start``; ``result`` reads it (bounded) and reaps it."""

    def __init__(self, cwd: Path, args: tuple[str, ...], ok: tuple[int, ...], env: dict[str, str], user_config: bool):
        config = _USER_CONFIG if user_config else _CONFIG
        self.cwd, self.args, self.ok = cwd, args, ok
        self._said: tuple[int, bytes] | GitError | None = None
        self.err = tempfile.TemporaryFile()  # noqa: SIM115 - closed in result()
        try:
            self.process = subprocess.Popen(
                ["git", *config, "--no-pager", *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=self.err, start_new_session=True,
            )  # fmt: skip  # its own process group: a timeout stops whatever git started too (git-daemon, hooks)
        except OSError as exc:
            self.err.close()
            raise GitError(
                f"cannot run git in {cwd}: {exc.strerror}; is git installed and the path a directory?"
            ) from exc

    def result(self) -> tuple[int, bytes]:
        """Its exit code and output, read once: a second call answers (or raises) as the first did."""
        if self._said is None:
            try:
                self._said = self._read()
            except GitError as exc:
                self._said = exc
        if isinstance(self._said, GitError):
            raise self._said
        return self._said

    def _read(self) -> tuple[int, bytes]:
        process, name = self.process, self.args[0]
        try:
            out = _bounded_read(process)
            code = process.wait()
        finally:
            process.stdout.close() if process.stdout else None
            if process.poll() is None:
                _kill(process)
                process.wait()
        self.err.seek(0)
        message = self.err.read(4096).decode("utf-8", "replace").strip().splitlines()[:1]
        self.err.close()
        if len(out) > MAX_OUTPUT:
            raise GitError(f"git {name} said more than {MAX_OUTPUT} bytes in {self.cwd}; nothing was judged")
        if code < 0:
            raise GitError(f"git {name} was stopped after {TIMEOUT:.0f} s in {self.cwd}; nothing was judged")
        if code not in self.ok:
            raise GitError(f"git {name} failed in {self.cwd}: {(message or ['exit ' + str(code)])[0]}")
        return code, out


def start(
    cwd: Path, *args: str, ok: tuple[int, ...] = (0,), keep: Mapping[str, str] | None = None, user_config: bool = False
) -> Running:
    """``git args`` started in ``cwd``, to be read with ``result``: several may run at once. A command
    that could start a filter first has the drivers the repository's config names neutralised
    (``planted``), unless ``keep`` carries them already."""
    env = environment(keep, user_config)
    if not user_config and args[:1] and args[0] in _NAMING and "GIT_CONFIG_COUNT" not in env:
        env |= planted(cwd, keep)
    return Running(cwd, args, ok, env, user_config)


def planted(cwd: Path, keep: Mapping[str, str] | None = None, inner: bytes = b"") -> dict[str, str]:
    """Configuration that overrules each filter driver the repository's config names
    (``git_config.overrides``), from one ``git config --get-regexp`` (which runs nothing it reads) —
    spared when the config files git reads at ``cwd`` are read in place and name none
    (``names_nothing``; never under a kept ``GIT_DIR``, which git reads instead) — and those of the
    submodules' listings ``inner`` (``submodules.submodule_listing``)."""
    if "GIT_DIR" not in (keep or {}) and names_nothing(str(cwd)):
        return overrides(b"\0" + inner)
    listing = Running(cwd, CONFIG_LISTING, (0, 1), environment(keep), False)
    return overrides(listing.result()[1] + b"\0" + inner)


def run(
    cwd: Path, *args: str, ok: tuple[int, ...] = (0,), keep: Mapping[str, str] | None = None, user_config: bool = False
) -> tuple[int, bytes]:
    """``git args`` in ``cwd``: (exit code, stdout); refused when the code is not in ``ok``, on a timeout,
    or past ``MAX_OUTPUT`` bytes. ``keep`` passes chosen ``GIT_*`` variables (a hook runs under them);
    ``user_config`` reads the user's whole configuration, ``core.hooksPath`` in force (to find where
    git runs hooks; only location queries run so, never one that could start a configured command)."""
    return start(cwd, *args, ok=ok, keep=keep, user_config=user_config).result()


def _bounded_read(process: subprocess.Popen[bytes]) -> bytes:
    """Stdout until EOF, at most ``MAX_OUTPUT + 1`` bytes and ``TIMEOUT`` seconds; past either, git is
    killed (a wait on ``select``, not a watchdog thread: a thread costs a millisecond per call)."""
    assert process.stdout is not None
    fd, chunks, size = process.stdout.fileno(), [], 0
    deadline = time.monotonic() + TIMEOUT
    while size <= MAX_OUTPUT:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            _kill(process)
            break
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    if size > MAX_OUTPUT:
        _kill(process)
    return b"".join(chunks)


def _kill(process: subprocess.Popen[bytes]) -> None:
    """Stop git and every process it started (its group, led by git: ``start_new_session``)."""
    with contextlib.suppress(ProcessLookupError):  # the whole group is gone already
        os.killpg(process.pid, signal.SIGKILL)


def fields(out: bytes) -> list[str]:
    """The NUL-ended fields of ``out``, decoded once whole: no UTF-8 sequence holds a NUL byte, so each
    field decodes as it would alone."""
    return out.decode("utf-8", "surrogateescape").split("\0")[:-1]


def name_status(out: bytes) -> list[Change]:
    """``--name-status -z`` records: a status, then one path, or two for a rename or copy (old, new)."""
    parts = fields(out)
    statuses = parts[0::2]
    if len(parts) % 2 == 0 and all(len(status) == 1 and status not in _TWO_SIDED for status in set(statuses)):
        # one-letter statuses, no rename or copy: records are pairs throughout (the common case, each
        # Change made by tuple.__new__ in C: a path costs no Python call)
        made = map(tuple.__new__, repeat(Change), zip(statuses, parts[1::2], repeat(None)))
        return cast("list[Change]", list(made))
    found, index = [], 0
    while index + 1 < len(parts):
        status = parts[index][:1]
        if status in ("R", "C") and index + 2 < len(parts):
            found.append(Change(status, parts[index + 2], parts[index + 1]))
            index += 3
        else:
            found.append(Change(status, parts[index + 1]))
            index += 2
    return found


def results(*running: Running) -> list[tuple[int, bytes]]:
    """Each one's result; every process is reaped even when one fails (its error is raised then)."""
    outs, failed = [], None
    for one in running:
        try:
            outs.append(one.result())
        except GitError as exc:
            failed = failed or exc
    if failed is not None:
        raise failed
    return outs

"""A task's executor home: the private folder a sandboxed executor lives in, outside the project.

Its place is derived from the state root and the ref alone (``<cache>/sandbox/<digest>/``), so the
Lead's server finds an executor's session log there without asking anyone: ``home/`` is the
executor's ``$HOME`` (the agent CLI's state, its caches, ``tmp/`` for ``$TMPDIR``), writable inside
the sandbox. The user's own home is never opened for writing: what a CLI needs of it (its
credentials, git's identity) is copied in at each launch.
Stdlib only: the sandbox's launcher loads this.
"""

from __future__ import annotations

import os
import stat

__all__ = [
    "REPLACED",
    "ExecutorHome",
    "cache_root",
    "codex_source",
    "executor_home",
    "prepare_home",
]

_COPY_LIMIT = 16 * 1024 * 1024  # a file larger than this is not a CLI's credentials or settings: not copied
# What a CLI needs of the user's home, copied in: Claude Code's login and settings file (its folder is
# $CLAUDE_CONFIG_DIR or ~/.claude), Codex's login and configuration ($CODEX_HOME or ~/.codex).
_CLAUDE_FILES = (".credentials.json",)
_CODEX_FILES = ("auth.json", "config.toml")


def cache_root() -> str:
    """This user's cache folder for handoff-mcp: ``$HANDOFF_CACHE_DIR``, else ``$XDG_CACHE_HOME``
    (or ``~/.cache``) then ``handoff-mcp``."""
    given = os.environ.get("HANDOFF_CACHE_DIR")
    if given and given != "off":  # "off" was once a setting of a cache of verdicts: the default then
        return given
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "handoff-mcp")


class ExecutorHome:
    """Where one task's sandboxed executor lives."""

    __slots__ = ("base", "home", "key", "tmp")

    def __init__(self, base: str) -> None:
        self.base = base
        self.key = os.path.basename(base)
        self.home = os.path.join(base, "home")
        self.tmp = os.path.join(self.home, "tmp")


def executor_home(state_root: str, ref: str, cache: str | None = None) -> ExecutorHome:
    from handoff_core.contract.digest import sha256_hex

    key = sha256_hex("\0".join((os.path.realpath(state_root), ref)).encode("utf-8", "surrogateescape"))[:32]
    return ExecutorHome(os.path.join(cache or cache_root(), "sandbox", key))


def _private_dir(path: str) -> int:
    """``path`` as a folder of this user's, 0700, not a link (made with its parents when missing): a
    handle on it, which the caller closes. Judged and changed by that handle, so a link swapped in
    after the check is never followed."""
    os.makedirs(path, mode=0o700, exist_ok=True)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        raise OSError(f"{path} is not a folder of this user's ({exc.strerror})") from exc
    info = os.fstat(fd)
    if info.st_uid != os.getuid():
        os.close(fd)
        raise OSError(f"{path} is not a folder of this user's")
    if info.st_mode & 0o077:
        os.fchmod(fd, 0o700)
    return fd


def _made(path: str) -> None:
    os.close(_private_dir(path))


def _read_small(path: str) -> bytes | None:
    """A regular file's bytes, bounded; None when it is absent, a link, or not a plain small file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > _COPY_LIMIT:
            return None
        return os.read(fd, _COPY_LIMIT + 1)[:_COPY_LIMIT]
    finally:
        os.close(fd)


def _put(path: str, data: bytes) -> None:
    """``path`` made anew holding ``data`` (0600): a private copy meant to change at every launch. The
    old entry is removed first and the new file made exclusively, in a folder held by handle: whatever
    an executor's earlier run left there (a link, a FIFO, a hard link to a file it may write) is
    replaced, never written through or waited on; one made in between refuses the launch."""
    folder, name = os.path.split(path)
    fd = _private_dir(folder)
    try:
        try:  # noqa: SIM105 - contextlib is not loaded at the launch's floor
            os.unlink(name, dir_fd=fd)
        except FileNotFoundError:
            pass
        out = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=fd)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(out, view) :]
        finally:
            os.close(out)
    finally:
        os.close(fd)


def _git_identity(user_home: str, config_home: str) -> bytes | None:
    """The ``[user]`` name and email of the user's global git configuration, and nothing else of it."""
    found: dict[str, str] = {}
    for path in (os.path.join(config_home, "git", "config"), os.path.join(user_home, ".gitconfig")):
        section = ""
        for raw in (_read_small(path) or b"").decode("utf-8", "replace").splitlines():
            line = raw.strip()
            if line.startswith("["):
                section = line.strip("[]").strip().lower()
            elif section == "user" and "=" in line:
                key, _, value = line.partition("=")
                if key.strip().lower() in ("name", "email") and value.strip().isprintable():
                    found[key.strip().lower()] = value.strip().strip('"')
    if not found:
        return None
    lines = ["[user]", *(f"\t{key} = {value}" for key, value in sorted(found.items()))]
    return ("\n".join(lines) + "\n").encode()


def codex_source(environ: dict[str, str]) -> str:
    """The user's own Codex folder (``$CODEX_HOME``, else ``~/.codex``): what the executor's copy is made
    from, and the only one the launch reads (the copy is the executor's to rewrite)."""
    return environ.get("CODEX_HOME") or os.path.join(environ.get("HOME") or os.path.expanduser("~"), ".codex")


# Variables naming the user's own folders, which the executor's home replaces (unset: the CLI's default
# under $HOME, the executor's).
REPLACED = ("CLAUDE_CONFIG_DIR", "XDG_RUNTIME_DIR")


def prepare_home(home: ExecutorHome, environ: dict[str, str]) -> dict[str, str]:
    """Make the executor's home and copy in what its CLI needs; the variables it runs with (those in
    ``REPLACED`` are to be unset)."""
    for folder in (home.base, home.home, home.tmp, *(os.path.join(home.home, d) for d in (".cache", ".config"))):
        _made(folder)
    user_home = environ.get("HOME") or os.path.expanduser("~")
    claude_source = environ.get("CLAUDE_CONFIG_DIR") or os.path.join(user_home, ".claude")
    for name in _CLAUDE_FILES:
        if (data := _read_small(os.path.join(claude_source, name))) is not None:
            _put(os.path.join(home.home, ".claude", name), data)
    if (data := _read_small(os.path.join(user_home, ".claude.json"))) is not None:
        _put(os.path.join(home.home, ".claude.json"), data)  # its onboarding and login state
    codex_home = os.path.join(home.home, ".codex")
    _made(codex_home)
    for name in _CODEX_FILES:
        if (data := _read_small(os.path.join(codex_source(environ), name))) is not None:
            _put(os.path.join(codex_home, name), data)
    config_home = environ.get("XDG_CONFIG_HOME") or os.path.join(user_home, ".config")
    if (identity := _git_identity(user_home, config_home)) is not None:
        _put(os.path.join(home.home, ".gitconfig"), identity)
    return {
        "HOME": home.home,
        "TMPDIR": home.tmp,
        "XDG_CACHE_HOME": os.path.join(home.home, ".cache"),
        "XDG_CONFIG_HOME": os.path.join(home.home, ".config"),
        "XDG_DATA_HOME": os.path.join(home.home, ".local", "share"),
        "XDG_STATE_HOME": os.path.join(home.home, ".local", "state"),
        "CODEX_HOME": codex_home,
    }

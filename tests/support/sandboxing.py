"""What the sandbox tests share: a real repository with a current task and a worktree task, and the
sandbox started exactly as a printed launch starts it (``python -I -S …/sandbox_process.py``)."""

from __future__ import annotations

import ctypes
import os
import struct
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from bench.requests import implementation
from handoff_core.contract.scope import Scope
from handoff_core.services import containment
from handoff_core.services.writing.store import Store
from tests.support.gitrepo import ENV, add_worktree, git, make_repo

__all__ = ["ENTRY", "Launch", "Project", "make_project", "terminal_controls", "without_landlock"]

ENTRY = Path(containment.__file__).parent / "sandbox_process.py"
SECRET = "lead-secret-" + "s" * 52
RUN_BOUND_S = 60


@dataclass(frozen=True)
class Launch:
    """One task's launch: its ref and pin, and the roots the printed line names."""

    ref: str
    sha: str
    project: Path
    state: Path
    secret: Path
    home: Path

    def argv(self, *command: str) -> list[str]:
        roots = ["--project-root", str(self.project), "--state-root", str(self.state)]
        task = ["--ref", self.ref, "--task-sha256", self.sha, "--secret-file", str(self.secret)]
        return [sys.executable, "-I", "-S", str(ENTRY), *roots, *task, "--", *command]

    def env(self) -> dict[str, str]:
        env = {"PATH": os.environ["PATH"], "HOME": str(self.home), "LANG": "C.UTF-8"}
        env |= {key: ENV[key] for key in ENV if key.startswith("GIT_") and "CONFIG" not in key}
        env["XDG_CACHE_HOME"] = os.environ["XDG_CACHE_HOME"]
        return env

    def run(self, *command: str, cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.argv(*command),
            cwd=cwd or self.project,
            env=self.env() | env,
            capture_output=True,
            text=True,
            timeout=RUN_BOUND_S,
            check=False,
        )

    def sh(self, script: str, cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess[str]:
        return self.run("sh", "-c", script, cwd=cwd, **env)

    def python(self, code: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return self.run(sys.executable, "-c", code, cwd=cwd)


@dataclass(frozen=True)
class Project:
    root: Path
    state: Path
    store: Store
    secret: Path
    home: Path
    worktree: Path

    def launch(self, scope: Scope, topic: str = "implement-a1", **fields: object) -> Launch:
        stored = self.store.create_task(implementation(topic, scope=scope, **fields))
        return Launch(
            ref=str(stored.ref),
            sha=stored.sha256,
            project=self.root,
            state=self.state,
            secret=self.secret,
            home=self.home,
        )

    def release(self, launch: Launch) -> None:
        """End the launch's claim (the next writer may be dispatched); it launches nothing after this."""
        from handoff_core.contract.ids import parse_ref

        self.store.release_writer(parse_ref(launch.ref), "none", "the test ended this writer")

    def current(self, **scope: object) -> Launch:
        return self.launch(Scope(workspace="current", writable=("src/a1/**",), **scope))  # type: ignore[arg-type]

    def in_worktree(self, topic: str = "implement-a1", **scope: object) -> Launch:
        fields: dict[str, object] = {"workspace": "required", "writable": ("src/a1/**",), "branch": "task/a1"}
        fields |= {"worktree": str(self.worktree)} | scope
        return self.launch(Scope(**fields), topic)  # type: ignore[arg-type]


def make_project(tmp_path: Path, project: Path, state_root: Path) -> Project:
    """``project`` as a repository (one commit) with a linked worktree on ``task/a1``, the Lead's
    secret beside it, and the HOME the executor's launch is given."""
    make_repo(project)
    worktree = add_worktree(project, "task/a1")
    secret = tmp_path / "config" / "handoff-mcp" / "secret"
    secret.parent.mkdir(parents=True)
    secret.write_text(SECRET)
    secret.chmod(0o600)
    home = tmp_path / "home"
    home.mkdir()
    store = Store(state_root, project)
    return Project(project, state_root, store, secret, home, worktree)


def head(tree: Path) -> str:
    return git(tree, "rev-parse", "HEAD").stdout.strip()


# A seccomp filter answering ENOSYS for Landlock's three syscalls, as a kernel without Landlock does.
_SYSCALLS = (444, 445, 446)
_LD_NR, _JEQ, _RET = 0x20, 0x15, 0x06
_ALLOW, _ENOSYS = 0x7FFF0000, 0x00050000 | 38


def _filter() -> bytes:
    program = [struct.pack("HBBI", _LD_NR, 0, 0, 0)]  # the syscall's number
    for index, number in enumerate(_SYSCALLS):
        program.append(struct.pack("HBBI", _JEQ, len(_SYSCALLS) - index, 0, number))
    program += [struct.pack("HBBI", _RET, 0, 0, _ALLOW), struct.pack("HBBI", _RET, 0, 0, _ENOSYS)]
    return b"".join(program)


def without_landlock() -> None:
    """Run in a child before exec (``preexec_fn``): from now on this process's kernel has no Landlock."""
    code = _filter()
    buffer = ctypes.create_string_buffer(code, len(code))
    program = struct.pack("HxxxxxxP", len(code) // 8, ctypes.addressof(buffer))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(38, 1, 0, 0, 0) != 0 or libc.prctl(22, 2, ctypes.c_char_p(program), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "seccomp refused")


def commit_count(tree: Path) -> int:
    return int(git(tree, "rev-list", "--all", "--count").stdout)


def terminal_controls() -> None:
    """Run in a child before exec (``preexec_fn``): it leads a session whose controlling terminal is its
    stdin, as a user's shell does (TIOCSTI works there, outside a sandbox)."""
    import fcntl
    import termios

    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)

"""``handoff-mcp sandbox`` run as a printed launch runs it, on real repositories: each rule tried
with ``sh -c`` and ``python -c`` as a hostile executor would, and the disk read back afterwards."""

from __future__ import annotations

import contextlib
import os
import select
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from handoff_core.contract.scope import Scope
from handoff_core.files import landlock
from handoff_core.files.executor_home import executor_home
from tests.support.gitrepo import git, write
from tests.support.sandboxing import (
    RUN_BOUND_S,
    SECRET,
    Project,
    commit_count,
    head,
    make_project,
    terminal_controls,
    without_landlock,
)

pytestmark = [
    pytest.mark.slow,  # each test starts the sandbox and the commands in it
    pytest.mark.skipif(landlock.abi() < 4, reason="the kernel offers no Landlock ABI 4 (Linux 6.7 or later)"),
]

REFUSED = 125


@pytest.fixture
def made(tmp_path: Path, project: Path, state_root: Path) -> Project:
    return make_project(tmp_path, project, state_root)


def denied(done: subprocess.CompletedProcess[str]) -> bool:
    return "Permission denied" in done.stderr or "Operation not permitted" in done.stderr


def test_a_write_inside_the_scope_lands_and_one_outside_is_refused_by_the_kernel(made: Project) -> None:
    launch = made.current()
    done = launch.sh("echo in > src/a1/in.txt && echo out > src/b/out.txt")
    assert (made.root / "src/a1/in.txt").read_text() == "in\n"
    assert done.returncode != 0, done
    assert denied(done), done
    assert not (made.root / "src/b/out.txt").exists()


def test_a_python_subprocess_cannot_write_outside_the_scope(made: Project) -> None:
    code = "import subprocess; subprocess.run(['sh', '-c', 'echo x > src/b/from-child.txt'], check=True)"
    done = made.current().python(code)
    assert done.returncode != 0, done
    assert denied(done), done
    assert not (made.root / "src/b/from-child.txt").exists()


def test_the_task_and_every_other_file_of_the_state_root_stay_as_published(made: Project) -> None:
    launch = made.current()
    task = next(made.state.rglob("TASK.md"))
    before = {path: path.read_bytes() for path in made.state.rglob("*") if path.is_file()}
    done = launch.sh(
        f"sed -i 's/src/everything/' {task}; chmod u+w {task}; echo x >> {task}; rm -f {task};"
        f"echo x > {task.parent}/REPORT.md; touch {made.state}/planted"
    )
    assert done.returncode != 0, done
    assert denied(done), done
    assert {path: path.read_bytes() for path in made.state.rglob("*") if path.is_file()} == before


def test_gits_configuration_hooks_and_info_cannot_be_written(made: Project) -> None:
    config = (made.root / ".git" / "config").read_bytes()
    done = made.current().sh(
        "git config core.hooksPath /tmp/evil; echo 'exit 0' > .git/hooks/pre-commit;"
        "echo '* filter=x' > .git/info/attributes; echo x >> .git/config"
    )
    assert denied(done), done
    assert (made.root / ".git" / "config").read_bytes() == config
    assert not (made.root / ".git" / "hooks" / "pre-commit").exists()
    assert not (made.root / ".git" / "info" / "attributes").exists()


def test_a_worktree_tasks_sandbox_keeps_its_worktrees_git_config_read_only_too(made: Project) -> None:
    launch = made.in_worktree()
    done = launch.sh(
        "git config --worktree core.hooksPath /tmp/evil; git config core.fsmonitor evil", cwd=made.worktree
    )
    assert done.returncode != 0, done
    assert "evil" not in (made.root / ".git" / "config").read_text()
    assert not list((made.root / ".git" / "worktrees").glob("*/config.worktree"))


def test_the_leads_secret_cannot_be_read_though_its_folder_and_everything_else_can(made: Project) -> None:
    done = made.current().sh(f"cat {made.secret}; ls {made.secret.parent}; cat README.md")
    assert SECRET not in done.stdout
    assert denied(done), done
    assert "secret" in done.stdout  # the folder lists: only the file's bytes are kept from the executor
    assert "x" in done.stdout  # README.md read


@pytest.mark.parametrize(
    "form",
    [
        "git commit -qam work",
        "{ git commit -qam work; }",
        "nice git commit -qam work",
        "git -c alias.c=commit c -qam work",
        "git commit-tree -m work HEAD^{tree} > /tmp/c && git update-ref HEAD $(cat /tmp/c)",
        'python3 -c \'import subprocess; subprocess.run(["git", "commit", "-qam", "work"], check=True)\'',
        "git stash",
        "git checkout -q -b other",
        "git symbolic-ref HEAD refs/heads/other",
        "git update-ref refs/heads/task/a1 HEAD",
        "git tag planted",
    ],
)
def test_an_unauthorised_git_action_in_any_shell_form_changes_nothing(made: Project, form: str) -> None:
    launch = made.current()
    write(made.root, "src/a1/core.py", "changed\n")
    before = (head(made.root), commit_count(made.root), git(made.root, "symbolic-ref", "HEAD").stdout)
    index = (made.root / ".git" / "index").read_bytes()
    done = launch.sh(form)
    assert done.returncode != 0, done
    assert (head(made.root), commit_count(made.root), git(made.root, "symbolic-ref", "HEAD").stdout) == before
    assert (made.root / ".git" / "index").read_bytes() == index


def test_an_authorised_commit_lands_on_the_tasks_branch_in_its_worktree(made: Project) -> None:
    launch = made.in_worktree()  # a worktree task with no actions listed is authorised to commit there
    main = head(made.root)
    done = launch.sh("echo new > src/a1/new.py && git add src/a1/new.py && git commit -qm work", cwd=made.worktree)
    assert done.returncode == 0, done
    assert git(made.worktree, "log", "-1", "--format=%s", "task/a1").stdout.strip() == "work"
    assert head(made.root) == main  # main did not move
    moved = launch.sh("git branch -f main HEAD; git update-ref refs/heads/main HEAD", cwd=made.worktree)
    assert moved.returncode != 0
    assert head(made.root) == main


def test_a_worktree_task_cannot_write_into_another_tasks_worktree_or_the_main_tree(made: Project) -> None:
    launch = made.in_worktree()
    done = launch.sh(f"echo x > {made.root}/src/a1/planted.py; echo x > {made.root}/notes.txt", cwd=made.worktree)
    assert denied(done), done
    made.release(launch)
    done = made.current().sh(f"echo x > {made.worktree}/src/a1/planted.py")
    assert denied(done), done
    assert not (made.worktree / "src/a1/planted.py").exists()
    assert not (made.root / "src/a1/planted.py").exists()


def test_a_push_to_a_file_remote_needs_push_authorised(made: Project, tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(made.root, "remote", "add", "origin", str(remote))
    git(made.root, "push", "-q", "origin", "main")
    tip = git(remote, "rev-parse", "main").stdout
    write(made.worktree, "src/a1/work.py")
    git(made.worktree, "add", "-A")
    git(made.worktree, "commit", "-qm", "work")
    no_push = made.in_worktree()
    denied_push = no_push.sh(f"git push -q origin task/a1; git send-pack {remote} task/a1", cwd=made.worktree)
    assert denied_push.returncode != 0, denied_push
    assert git(remote, "branch", "--list").stdout.split() == ["main"]
    made.release(no_push)
    pushed = made.in_worktree("pushing", actions=("commit", "push")).sh("git push -q origin task/a1", cwd=made.worktree)
    assert pushed.returncode == 0, pushed
    assert git(remote, "rev-parse", "task/a1").stdout == git(made.worktree, "rev-parse", "HEAD").stdout
    assert git(remote, "rev-parse", "main").stdout == tip


def test_the_executor_has_a_home_and_a_temporary_folder_of_its_own_and_the_devices_a_shell_needs(
    made: Project,
) -> None:
    launch = made.current()
    done = launch.sh(
        'echo h > "$HOME/h" && echo t > "$TMPDIR/t" && echo n > /dev/null && : > /dev/null && echo "$HOME"; '
        f"echo x > {made.home}/planted"
    )
    home = executor_home(str(made.state.resolve()), launch.ref)
    assert done.stdout.strip() == home.home, done
    assert Path(home.home, "h").read_text() == "h\n"
    assert Path(home.tmp, "t").read_text() == "t\n"
    assert denied(done)
    assert not (made.home / "planted").exists()


def test_a_task_changed_after_its_dispatch_launches_nothing(made: Project) -> None:
    launch = made.current()
    task = next(made.state.rglob("TASK.md"))
    task.chmod(0o644)
    task.write_text(task.read_text().replace("src/a1/**", "**"))
    done = launch.sh(f"touch {made.root}/ran")
    assert done.returncode == REFUSED, done
    assert "changed after dispatch" in done.stderr
    assert not (made.root / "ran").exists()


@pytest.mark.parametrize(("mode", "runs"), [("required", False), ("if-available", True), ("off", True)])
def test_without_landlock_the_launch_refuses_unless_the_task_allows_it(made: Project, mode: str, runs: bool) -> None:
    launch = made.launch(Scope(workspace="current", writable=("src/a1/**",), sandbox=mode))  # type: ignore[arg-type]
    done = subprocess.run(
        launch.argv("sh", "-c", f"touch {made.root}/ran"),
        cwd=made.root,
        env=launch.env(),
        capture_output=True,
        text=True,
        timeout=RUN_BOUND_S,
        check=False,
        preexec_fn=without_landlock,
    )
    assert (made.root / "ran").exists() == runs, done
    assert done.returncode == (0 if runs else REFUSED), done
    said = "no Landlock" if mode != "off" else "sandbox: off"
    assert said in done.stderr
    assert ("without the kernel sandbox" in done.stderr) == runs


def test_tcp_connects_reach_only_the_granted_ports_unless_push_is_authorised(made: Project) -> None:
    with socket.socket() as allowed, socket.socket() as other:
        allowed.bind(("127.0.0.1", 0))
        other.bind(("127.0.0.1", 0))
        allowed.listen()
        other.listen()
        ports = [s.getsockname()[1] for s in (allowed, other)]
        code = (
            "import socket, sys\n"
            "for port in sys.argv[1:]:\n"
            "    try: socket.create_connection(('127.0.0.1', int(port)), timeout=5).close(); print(port, 'ok')\n"
            "    except OSError as e: print(port, 'refused', e.errno)\n"
        )
        launch = made.current()
        done = launch.run(sys.executable, "-c", code, *map(str, ports), HANDOFF_SANDBOX_PORTS=str(ports[0]))
        assert done.stdout.split("\n")[:2] == [f"{ports[0]} ok", f"{ports[1]} refused 13"], done
        made.release(launch)
        pushing = made.in_worktree("pushing", actions=("commit", "push"))
        done = pushing.run(sys.executable, "-c", code, *map(str, ports))
        assert done.stdout.split("\n")[:2] == [f"{ports[0]} ok", f"{ports[1]} ok"], done


def test_the_executor_cannot_signal_a_process_outside_its_sandbox(made: Project) -> None:
    outside = subprocess.Popen(["sleep", "30"])
    try:
        done = made.current().sh(f"kill -9 {outside.pid}")
        assert done.returncode != 0, done
        assert outside.poll() is None
    finally:
        outside.kill()
        outside.wait(timeout=10)


def test_push_credentials_are_unreadable_unless_push_is_authorised(made: Project) -> None:
    key = made.home / ".ssh" / "id_ed25519"
    key.parent.mkdir()
    key.write_text("PRIVATE KEY")
    launch = made.current()
    assert "PRIVATE KEY" not in launch.sh(f"cat {key}").stdout
    made.release(launch)
    pushing = made.in_worktree("pushing", actions=("commit", "push"))
    assert "PRIVATE KEY" in pushing.sh(f"cat {key}", cwd=made.worktree).stdout


def test_the_broker_ends_with_the_command_it_serves(made: Project) -> None:
    launch = made.current()
    done = launch.sh("cat /proc/$PPID/task/*/children 2>/dev/null; echo; ls /proc | grep -c .")
    assert done.returncode == 0, done
    brokers = [pid for pid in _pids() if b"broker_process" in _cmdline(pid) and launch.ref.encode() in _cmdline(pid)]
    for pid in brokers:  # not our children: watched through a pidfd, each wait bounded
        try:
            watched = os.pidfd_open(pid)
        except ProcessLookupError:
            continue
        with watched_fd(watched):
            assert select.select([watched], [], [], RUN_BOUND_S)[0] == [watched], f"broker {pid} outlived its command"


def _pids() -> list[int]:
    return [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()]


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


@contextlib.contextmanager
def watched_fd(fd: int) -> Iterator[None]:
    try:
        yield
    finally:
        os.close(fd)


def test_the_executor_cannot_type_into_the_terminal_it_was_started_from(made: Project) -> None:
    code = (
        "import fcntl, termios\n"
        "try:\n    fcntl.ioctl(0, termios.TIOCSTI, b'x'); print('typed')\n"
        "except OSError as e: print('refused', e.errno)\n"
    )
    launch = made.current()
    controller, terminal = os.openpty()
    try:
        for command, said in (
            ([sys.executable, "-c", code], "typed"),
            (launch.argv(sys.executable, "-c", code), "refused 1"),
        ):
            done = subprocess.run(
                command,
                stdin=terminal,
                capture_output=True,
                text=True,
                timeout=RUN_BOUND_S,
                check=False,
                cwd=made.root,
                env=launch.env(),
                preexec_fn=terminal_controls,
            )
            assert done.stdout.strip() == said, done
    finally:
        os.close(controller)
        os.close(terminal)

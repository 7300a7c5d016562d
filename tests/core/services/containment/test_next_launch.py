"""An executor preparing its task's next launch from inside the last one: the launch runs outside the
sandbox until it restricts itself, so nothing the executor can write may steer it there."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import handoff_core
from handoff_core.files import landlock
from tests.support.sandboxing import RUN_BOUND_S, Launch, Project, make_project

pytestmark = [
    pytest.mark.slow,  # each test starts the sandbox and the commands in it
    pytest.mark.skipif(landlock.abi() < 4, reason="the kernel offers no Landlock ABI 4 (Linux 6.7 or later)"),
]

REFUSED = 125
# Inside: write to the descriptor named in argv[1], then list what this process holds open.
LEAKED = (
    "import os, sys\n"
    "try: os.write(int(sys.argv[1]), b'escaped'); print('written')\n"
    "except OSError: print('refused')\n"
    "print(*sorted(int(fd) for fd in os.listdir('/proc/self/fd') if os.path.exists(f'/proc/self/fd/{fd}')))\n"
)


@pytest.fixture
def made(tmp_path: Path, project: Path, state_root: Path) -> Project:
    return make_project(tmp_path, project, state_root)


def _run_from(entry: Path, launch: Launch, script: str) -> subprocess.CompletedProcess[str]:
    """``script`` launched as the printed line launches it, but by the sandbox whose entry is ``entry``."""
    argv = launch.argv("sh", "-c", script)
    argv[3] = str(entry)
    return subprocess.run(
        argv, cwd=launch.project, env=launch.env(), capture_output=True, text=True, timeout=RUN_BOUND_S, check=False
    )


def test_a_task_that_may_write_the_sandboxs_own_code_launches_nothing(made: Project) -> None:
    vendored = made.root / "src" / "a1" / "vendored" / "handoff_core"
    shutil.copytree(Path(handoff_core.__file__).parent, vendored, ignore=shutil.ignore_patterns("__pycache__"))
    entry = vendored / "services" / "containment" / "sandbox_process.py"
    code = vendored / "services" / "containment" / "launch.py"
    before = code.read_bytes()
    launch = made.current()
    unbound = "sed -i -e 's/ruleset.restrict()/None/' -e 's/seccomp.forbid_outside_reach(truncate=version < 3)/None/'"
    first = _run_from(entry, launch, f"{unbound} {code}")
    assert first.returncode == REFUSED, first
    assert "the sandbox's own code" in first.stderr, first
    assert code.read_bytes() == before
    second = _run_from(entry, launch, f"echo x > {made.root}/src/b/escaped.txt")
    assert second.returncode == REFUSED, second
    assert not (made.root / "src" / "b" / "escaped.txt").exists()


@pytest.mark.parametrize("plant", ["mkfifo", "ln -s /dev/zero", "ln src/a1/core.py"])
def test_what_an_executor_plants_where_its_launch_copies_the_clis_login_is_replaced(made: Project, plant: str) -> None:
    (made.home / ".claude.json").write_text('{"login": "the user\'s"}')
    launch = made.current()
    planted = launch.sh(f'rm -f "$HOME/.claude.json"; {plant} "$HOME/.claude.json"')
    assert planted.returncode == 0, planted
    core = (made.root / "src" / "a1" / "core.py").read_bytes()
    try:
        done = subprocess.run(
            launch.argv("sh", "-c", 'cat "$HOME/.claude.json"'),
            cwd=made.root,
            env=launch.env(),
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"the launch hung on what the executor planted: {exc}")
    assert done.returncode == 0, done
    assert done.stdout == '{"login": "the user\'s"}', done
    assert (made.root / "src" / "a1" / "core.py").read_bytes() == core  # a linked file is not written through


def test_the_command_inherits_no_descriptor_beyond_its_standard_three(made: Project, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    launch = made.current()
    with outside.open("w") as held:  # a descriptor the launch's parent leaked, open for writing outside
        number = held.fileno()
        done = subprocess.run(
            launch.argv(sys.executable, "-c", LEAKED, str(number)),
            cwd=made.root,
            env=launch.env(),
            capture_output=True,
            text=True,
            timeout=RUN_BOUND_S,
            check=False,
            pass_fds=(number,),
        )
    assert outside.read_text() == "", done
    assert done.stdout.split() == ["refused", "0", "1", "2"], done


def test_a_worktrees_repository_repointed_by_its_last_launch_opens_nothing_at_the_next(
    made: Project, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"  # any folder the user may write, named as a "remote"
    elsewhere.mkdir()
    launch = made.in_worktree(actions=("commit", "push"))
    repoint = (
        'gitdir=$(git rev-parse --absolute-git-dir) && fake="$HOME/fake" && mkdir -p "$fake/refs" "$fake/objects" '
        f'&& printf \'[remote "x"]\\n\\turl = {elsewhere}\\n\' > "$fake/config" '
        '&& echo "$fake" > "$gitdir/commondir.new" && mv "$gitdir/commondir.new" "$gitdir/commondir"'
    )
    first = launch.sh(repoint, cwd=made.worktree)
    assert first.returncode == 0, first  # with commit, the worktree's git folder is the executor's to write
    second = launch.sh(f"echo x > {elsewhere}/planted", cwd=made.worktree)
    assert second.returncode != 0, second
    assert not (elsewhere / "planted").exists()
    assert "names another repository than the project's" in second.stderr, second

"""What a sandboxed launch grants, tried by an executor that prepares its task's next launch from inside
the last one: nothing it leaves behind widens what the next launch grants."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest

from handoff_core.files import landlock
from handoff_core.files.executor_home import executor_home
from tests.support.gitrepo import git
from tests.support.sandboxing import Project, make_project

pytestmark = [
    pytest.mark.slow,  # each test starts the sandbox and the commands in it
    pytest.mark.skipif(landlock.abi() < 4, reason="the kernel offers no Landlock ABI 4 (Linux 6.7 or later)"),
]

CONNECT = (
    "import socket, sys\n"
    "try: socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=5).close(); print('connected')\n"
    "except OSError as e: print('refused', e.errno)\n"
)


@pytest.fixture
def made(tmp_path: Path, project: Path, state_root: Path) -> Project:
    return make_project(tmp_path, project, state_root)


def test_a_codex_configuration_left_in_the_executors_home_opens_no_port_at_its_next_launch(made: Project) -> None:
    launch = made.current()
    home = executor_home(str(made.state.resolve()), launch.ref)
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        provider = f'[model_providers.mine]\nbase_url = "http://127.0.0.1:{port}/v1"\n'
        planted = launch.sh(f"printf '{provider}' > \"$CODEX_HOME/config.toml\"")
        assert planted.returncode == 0, planted
        assert Path(home.home, ".codex", "config.toml").read_text() == provider
        done = launch.run(sys.executable, "-c", CONNECT, str(port))
    assert done.stdout.strip() == "refused 13", done


def test_a_worktrees_git_entry_is_never_writable_whatever_its_globs_reach(made: Project) -> None:
    launch = made.in_worktree(writable=("**/*.py",))  # its literal folder is the worktree's root
    marker = (made.worktree / ".git").read_bytes()
    done = launch.sh('echo x > src/a1/in.py; echo "gitdir: $HOME" > .git; rm -f .git', cwd=made.worktree)
    assert done.returncode != 0, done
    assert (made.worktree / ".git").read_bytes() == marker
    assert (made.worktree / "src/a1/in.py").read_text() == "x\n"  # the rest of the root is written
    assert git(made.worktree, "rev-parse", "--absolute-git-dir").stdout.strip().startswith(str(made.root / ".git"))


def test_the_agent_clis_records_of_other_sessions_are_unreadable(made: Project) -> None:
    token = "HANDOFF_TOKEN=" + "t" * 43  # as a Lead's transcript records every executor_config it was handed
    records = [
        made.home / ".claude" / "projects" / "-work-project" / "lead-session.jsonl",
        made.home / ".claude.json",
        made.home / ".codex" / "sessions" / "2026" / "rollout.jsonl",
    ]
    for record in records:
        record.parent.mkdir(parents=True, exist_ok=True)
        record.write_text(token)
    first = made.current()
    assert first.sh('echo "$HANDOFF_TOKEN" > "$HOME/mine"', HANDOFF_TOKEN=token).returncode == 0
    other = executor_home(str(made.state.resolve()), first.ref)
    made.release(first)
    launch = made.in_worktree()
    done = launch.sh(
        f'cat {" ".join(map(str, [*records, Path(other.home, "mine")]))}; echo x > "$HOME/own"; cat "$HOME/own"'
    )
    assert token not in done.stdout, done
    assert done.stdout == "x\n", done  # its own home stays readable


def test_a_task_authorised_to_stash_moves_no_other_ref(made: Project) -> None:
    launch = made.in_worktree(actions=("commit", "stash"))
    main = git(made.root, "rev-parse", "main").stdout
    moves = "git commit -q --allow-empty -m x; git update-ref refs/heads/main HEAD; git tag planted"
    done = launch.sh(moves, cwd=made.worktree)
    assert done.returncode != 0, done
    assert git(made.root, "rev-parse", "main").stdout == main
    assert git(made.root, "tag").stdout == ""
    assert "stash: not possible in the sandbox" in done.stderr, done


def test_a_task_is_told_which_branches_share_its_branchs_ref_folder(made: Project) -> None:
    git(made.root, "branch", "task/b1")
    git(made.root, "pack-refs", "--all")
    git(made.root, "branch", "task/c1")
    done = made.in_worktree().sh("true", cwd=made.worktree)
    assert "the ref folder of the branch task/a1 also holds task/b1, task/c1" in done.stderr, done

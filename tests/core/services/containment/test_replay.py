"""One acceptance check replayed by its supervisor, in the replay's sandbox: writes only in its copy
and its private folder, reads all but the Lead's secret, connects nowhere, stops on time and on too
much output, leaves no process behind, and cannot stop its supervisor."""

from __future__ import annotations

import marshal
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from handoff_core.contract.checks import Check
from handoff_core.files.interpreter import import_path
from handoff_core.layout import CHECK_MAX_OUTPUT
from handoff_core.services.acceptance.replayed import Refused, Replayed, check_environment, replay
from handoff_core.services.acceptance.scratch import Scratch
from tests.support.calc import pids_running
from tests.support.sandboxing import without_landlock

pytestmark = pytest.mark.slow


@pytest.fixture
def scratch(tmp_path: Path) -> Scratch:
    folder = tmp_path / "scratch"
    made = Scratch(str(folder), str(folder / "tree"), str(folder / "home"))
    os.makedirs(os.path.join(made.home, "tmp"))
    os.makedirs(made.tree)
    return made


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    path = tmp_path / "config" / "secret"
    path.parent.mkdir()
    path.write_text("lead-secret")
    return path


@pytest.fixture
def listener() -> Iterator[int]:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(4)
        yield server.getsockname()[1]


def replayed(scratch: Scratch, secret: Path, run: str, timeout_s: int = 30, **env: str) -> Replayed:
    variables = check_environment(dict(os.environ) | env, scratch)
    return replay(Check(run, ".", timeout_s), scratch.tree, scratch, str(secret), variables)


def test_a_check_writes_in_its_copy_and_its_home_and_nowhere_else(
    scratch: Scratch, secret: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    done = replayed(
        scratch, secret, f'echo a > made.txt && echo b > "$HOME/h" && echo c > "$TMPDIR/t" && echo d > {outside}'
    )
    assert (done.exit_code, done.why) == (2, "exited 2")
    assert "Permission denied" in done.tail
    assert Path(scratch.tree, "made.txt").read_text() == "a\n"
    assert Path(scratch.home, "h").read_text() == "b\n"
    assert Path(scratch.home, "tmp", "t").read_text() == "c\n"
    assert not outside.exists()


def test_a_check_reads_the_tree_but_not_the_leads_secret(scratch: Scratch, secret: Path) -> None:
    done = replayed(scratch, secret, f"head -c 20 {sys.executable} > /dev/null && cat {secret}")
    assert done.exit_code == 1
    assert "Permission denied" in done.tail
    assert "lead-secret" not in done.tail


def test_a_check_connects_nowhere(scratch: Scratch, secret: Path, listener: int) -> None:
    socket.create_connection(("127.0.0.1", listener), 5).close()  # outside the sandbox, the port answers
    code = f"import socket; socket.create_connection(('127.0.0.1', {listener}), 5)"
    done = replayed(scratch, secret, f'{sys.executable} -c "{code}"')
    assert done.exit_code == 1
    assert "PermissionError" in done.tail


def test_credentials_in_the_environment_do_not_reach_a_check(scratch: Scratch, secret: Path) -> None:
    done = replayed(scratch, secret, 'echo "[$GH_TOKEN][$MY_API_KEY][$HANDOFF_ROLE][$KEPT][$HOME]"', GH_TOKEN="t",
                    MY_API_KEY="k", HANDOFF_ROLE="lead", KEPT="yes")  # fmt: skip
    assert done.tail == f"[][][][yes][{scratch.home}]\n"


def test_a_check_that_writes_without_end_is_stopped_past_its_output_bound(scratch: Scratch, secret: Path) -> None:
    done = replayed(scratch, secret, "yes")
    assert done.exit_code is None
    assert done.why == f"stopped: wrote more than {CHECK_MAX_OUTPUT // (1024 * 1024)} MiB of output"
    assert done.tail.endswith("y\ny\n")
    assert len(done.tail) <= 2000


def test_every_process_a_check_leaves_is_stopped_when_it_ends(scratch: Scratch, secret: Path) -> None:
    marker = "4343.25"
    done = replayed(scratch, secret, f"setsid sleep {marker} & (nohup sleep {marker} > /dev/null 2>&1 &); echo ok")
    assert (done.exit_code, done.tail) == (0, "ok\n")
    assert pids_running(f"sleep {marker}") == []


def test_a_check_cannot_stop_its_supervisor(scratch: Scratch, secret: Path) -> None:
    done = replayed(scratch, secret, 'kill -9 "$PPID" 2>&1; echo still')
    assert done.exit_code == 0
    assert "still" in done.tail


def test_where_the_kernel_offers_no_landlock_nothing_is_run(scratch: Scratch, secret: Path) -> None:
    question = {"run": "touch ran", "cwd": scratch.tree, "timeout_s": 5, "scratch": scratch.tree}
    question |= {"private": scratch.home, "secret_file": str(secret), "user_home": str(Path.home()), "env": {}}
    boot = "import marshal, sys; sys.path[:] = marshal.load(sys.stdin.buffer); from {0} import main; main()"
    answered = subprocess.run(
        [sys.executable, "-I", "-c", boot.format("handoff_core.services.containment.replay")],
        input=marshal.dumps(import_path()) + marshal.dumps(question),
        capture_output=True,
        timeout=60,
        check=True,
        preexec_fn=without_landlock,  # the child's kernel loses Landlock before it starts
    )
    assert b"no Landlock" in answered.stdout
    assert not Path(scratch.tree, "ran").exists()


def test_a_sandbox_that_cannot_be_drawn_is_a_refusal_not_a_result(scratch: Scratch, secret: Path) -> None:
    gone = scratch._replace(tree=str(Path(scratch.folder) / "gone"))  # the copy it would write in is not there
    with pytest.raises(Refused, match="cannot draw the sandbox"):
        replay(Check("true"), scratch.home, gone, str(secret), {})

"""The sandbox's broker asked by a hostile executor from inside its sandbox, over the transport its
launch hands it: what it publishes is its own task's, and nothing else."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from bench.requests import implementation
from handoff_core.contract.ids import parse_ref
from handoff_core.contract.scope import Scope
from handoff_core.files import landlock
from handoff_core.services.capabilities.tokens import report_token
from handoff_core.services.evidence import endings
from tests.support.sandboxing import Project, make_project

pytestmark = [
    pytest.mark.slow,  # each test starts the sandbox, its broker and a client in it
    pytest.mark.skipif(landlock.abi() < 4, reason="the kernel offers no Landlock ABI 4 (Linux 6.7 or later)"),
]

FIELDS = {
    "status": "completed",
    "focused": "Built A1. Kept the API. Stopped after tests. Next: review.",
    "artifacts": "src/b/other.py",
    "verification": "pytest: exit 0",
    "unverified": "Nothing left unverified.",
    "problems": "None.",
    "source_checkpoint": None,
}
# A client inside the sandbox: one request (argv[1], JSON) to the broker its launch named (with the
# key in argv[2] instead of the one it was handed, when given); the answer.
ASK = (
    "import json, os, sys\n"
    "from handoff_core.files.local_socket import ask\n"
    "address = os.environ['HANDOFF_BROKER']\n"
    "address = address.partition('#')[0] + '#' + sys.argv[2] if len(sys.argv) > 2 else address\n"
    "print(json.dumps(ask(address, json.loads(sys.argv[1]), 30)))\n"
)


@pytest.fixture
def made(tmp_path: Path, project: Path, state_root: Path) -> Project:
    return make_project(tmp_path, project, state_root)


def test_a_tasks_broker_publishes_no_other_tasks_report_with_its_token(made: Project) -> None:
    launch = made.current()
    other = made.store.create_task(
        implementation(
            "implement-b",
            scope=Scope(workspace="required", writable=("src/b/**",), branch="task/a1", worktree=str(made.worktree)),
            writer_limit=2,
        )
    )
    token = report_token(made.secret.read_bytes(), made.state, parse_ref(launch.ref))
    report = FIELDS | {"session": other.ref.session, "task": other.ref.task}
    request = {"op": "write_report", "ref": launch.ref, "token": token, "report": report, "accept_warnings": True}
    done = launch.run(sys.executable, "-c", ASK, json.dumps(request))
    assert done.returncode == 0, done
    assert json.loads(done.stdout)["error"]["code"] == "token_refused", done.stdout
    assert not (other.path.parent / "REPORT.md").exists()
    assert (other.path.parent / "TASK.md").is_file()


def test_a_request_without_the_brokers_key_is_refused_unread(made: Project) -> None:
    launch = made.current()
    ref = parse_ref(launch.ref)
    token = report_token(made.secret.read_bytes(), made.state, ref)
    report = FIELDS | {"session": ref.session, "task": ref.task}
    request = {"op": "write_report", "ref": launch.ref, "token": token, "report": report, "accept_warnings": True}
    done = launch.run(sys.executable, "-c", ASK, json.dumps(request), "0" * 48)
    assert done.returncode == 0, done
    assert json.loads(done.stdout)["error"]["code"] == "token_refused", done.stdout
    assert not list(made.state.rglob("REPORT.md"))


def test_the_stop_hooks_records_are_kept_by_the_broker_where_the_lead_reads_them(made: Project) -> None:
    launch = made.current()
    counts = []
    for _ in range(2):
        request = {"op": "count_block", "ref": launch.ref, "session_id": "session-1"}
        done = launch.run(sys.executable, "-c", ASK, json.dumps(request))
        assert done.returncode == 0, done
        counts.append(json.loads(done.stdout)["count"])
    ending = {"op": "record_ending", "ref": launch.ref, "session_id": "session-1"}
    assert launch.run(sys.executable, "-c", ASK, json.dumps(ending)).returncode == 0
    assert counts == [0, 1]
    found = endings.ended_without_report(str(made.state), launch.ref)  # this process's cache: the user's
    assert found is not None
    assert found.session_id == "session-1"

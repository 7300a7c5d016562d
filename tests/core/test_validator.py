from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from handoff_core.contract.proof import PROOF_INVALID, signing_key
from handoff_core.services.writing.store import Store
from handoff_core.validator import arguments
from tests.conftest import implementation, report_of

SIGNING_TOKEN = "validator-token-aaaaaaaaaaaaaaaaa"
SCRIPT = Path(sys.executable).parent / "handoff-validate"
pytestmark = pytest.mark.slow  # every test here runs the validator as a process


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, timeout=60, check=False)


def flags(project: Path, store: Store, stage: str, **override: str) -> list[str]:
    ref = store.create_task(implementation()).ref
    values = {"repo": str(project), "change": ref.change, "session": ref.session, "task": ref.task, "stage": stage}
    values.update(override)
    return arguments(**values)


def test_help_prints_usage_and_exits_zero() -> None:
    result = run("--help")
    assert result.returncode == 0
    assert "--stage dispatch|return" in result.stdout


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--repo", "x", "--change", "c", "--session", "s", "--task", "t"],
        ["--repo", "x", "--change", "c", "--session", "s", "--task", "t", "--stage", "deliver"],
        ["--repo", "x", "--repo", "y"],
        ["--bogus", "1"],
        ["--repo"],
        ["--repo", "--change"],
    ],
)
def test_bad_arguments_exit_two_with_a_message_on_stderr(args: list[str]) -> None:
    result = run(*args)
    assert result.returncode == 2
    assert result.stdout == ""
    assert "Usage:" in result.stderr


def test_a_valid_dispatch_exits_zero_with_the_seed_json_shape(project: Path, store: Store) -> None:
    result = run(*flags(project, store, "dispatch"))
    assert result.returncode == 0, result.stdout
    payload = json.loads(result.stdout)
    assert set(payload) == {"errors", "warnings", "caveat"}
    assert payload["errors"] == []


def test_the_state_root_may_be_given_explicitly(project: Path, store: Store) -> None:
    args = [
        *flags(project, store, "dispatch"),
        "--state-root",
        str(store.roots.state_root),
        "--method-root",
        str(project),
    ]
    assert run(*args).returncode == 0


def test_a_broken_tree_exits_one_with_the_problems_listed(project: Path, store: Store) -> None:
    result = run(*flags(project, store, "return"))
    assert result.returncode == 1
    assert "REPORT.md not found" in json.loads(result.stdout)["errors"]


def test_a_missing_state_root_is_a_validation_error_not_a_crash(tmp_path: Path, project: Path, store: Store) -> None:
    result = run(*flags(project, store, "dispatch", repo=str(tmp_path / "nowhere")))
    assert result.returncode == 1
    assert json.loads(result.stdout)["errors"]


def test_a_relative_state_root_is_taken_against_the_repo_from_any_directory(
    project: Path, store: Store, tmp_path: Path
) -> None:
    args = [*flags(project, store, "dispatch"), "--state-root", "speculo/.speculo"]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = subprocess.run(
        [str(SCRIPT), *args], capture_output=True, text=True, timeout=60, check=False, cwd=elsewhere
    )
    assert result.returncode == 0, result.stdout


def test_judging_what_this_server_rendered_never_loads_pyyaml(project: Path, store: Store) -> None:
    """Its frontmatter takes the fast reader: a check pays no YAML import at start-up."""
    code = (
        "import sys\nfrom handoff_core.validator import main\n"
        "code = main(sys.argv[1:])\nprint(code, 'yaml' in sys.modules, file=sys.stderr)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, *flags(project, store, "dispatch")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.stderr.strip() == "0 False"


def test_a_hand_written_frontmatter_is_still_read_by_pyyaml(project: Path, store: Store) -> None:
    args = flags(project, store, "dispatch")
    task = next(project.rglob("TASK.md"))
    text = task.read_text()
    task.chmod(0o644)
    by_hand = text.replace('kind: "implementation"', "kind: implementation   # by hand", 1)
    assert by_hand != text
    task.write_text(by_hand)
    assert run(*args).returncode == 0


def _signed(project: Path, store: Store, token: str | None) -> list[str]:
    """A task whose TASK records a signing key, returned with a REPORT published with ``token``."""
    request = replace(implementation(), signing_key=lambda ref: signing_key(SIGNING_TOKEN))
    ref = store.create_task(request).ref
    focused = "Built A1. Kept the API. Stopped after tests. Next: review."
    store.write_report(
        report_of(ref, status="completed", focused=focused, artifacts="x", verification="y"),
        ref.change,
        token=token,
    )
    return arguments(str(project), ref.change, ref.session, ref.task, "return")


def _loads_cryptography(args: list[str]) -> str:
    code = (
        "import sys\nfrom handoff_core.validator import main\n"
        "code = main(sys.argv[1:])\nprint(code, 'cryptography' in sys.modules, file=sys.stderr)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60, check=False
    )
    return result.stderr.strip()


def test_a_signed_report_passes_and_a_hand_written_one_loads_no_cryptography(project: Path, store: Store) -> None:
    valid = _signed(project, store, SIGNING_TOKEN)
    assert run(*valid).returncode == 0
    assert _loads_cryptography(valid) == "0 True"
    absent = _signed(project, store, None)
    assert json.loads(run(*absent).stdout)["errors"] == []
    assert _loads_cryptography(absent) == "0 False"


def test_a_report_edited_after_publishing_fails_validation_naming_the_signature(project: Path, store: Store) -> None:
    args = _signed(project, store, SIGNING_TOKEN)
    path = next(project.rglob("REPORT.md"))
    data = path.read_bytes().replace(b"Status: completed", b"Status: failed")
    path.chmod(0o644)
    path.write_bytes(data)
    result = run(*args)
    assert result.returncode == 1
    assert json.loads(result.stdout)["errors"] == [PROOF_INVALID]

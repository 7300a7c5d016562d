from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from bench.requests import implementation, report_of, review
from handoff_core.contract.proof import PROOF_INVALID, signing_key
from handoff_core.services.writing.store import Store
from handoff_core.validator import arguments
from tests.support.changes import make_change

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


def test_a_signed_report_passes_and_neither_it_nor_a_hand_written_one_loads_cryptography(
    project: Path, store: Store
) -> None:
    valid = _signed(project, store, SIGNING_TOKEN)
    assert run(*valid).returncode == 0
    assert _loads_cryptography(valid) == "0 False"
    absent = _signed(project, store, None)
    assert json.loads(run(*absent).stdout)["errors"] == []
    assert _loads_cryptography(absent) == "0 False"


HEAVY = (
    *("pathlib", "hashlib", "difflib", "base64", "urllib.parse", "yaml", "cryptography", "typing", "json"),
    *("handoff_core.contract.anchor", "handoff_core.contract.release", "handoff_core.contract.locator"),
)
LEAN = (
    "import sys, sysconfig\n"
    "sys.path[:0] = [sys.argv.pop(1)]\n"  # the package itself; no site, so no editable finder loads anything
    "sys.path.append(sysconfig.get_paths()['platlib'])\n"  # its dependencies, without running their .pth files
    "from handoff_core.validator import main\n"
    "code = main(sys.argv[1:])\n"
    "print(code, sorted(m for m in HEAVY if m in sys.modules), 'cryptography.hazmat.bindings._rust' in sys.modules, "
    "file=sys.stderr)"
)


def _loaded(args: list[str]) -> str:
    root = str(Path(__file__).resolve().parents[2])
    code = f"HEAVY = {HEAVY!r}\n{LEAN}"
    result = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code, root, *args], capture_output=True, text=True, timeout=60, check=False
    )
    return result.stderr.strip()


def test_the_return_stage_of_an_implementation_task_loads_only_what_it_checks(project: Path, store: Store) -> None:
    """No pathlib (with its URL parser), hashlib (OpenSSL), difflib, base64, YAML, typing, json or cryptography,
    not even for a signed REPORT: its signature is checked in plain Python."""
    assert _loaded(_signed(project, store, None)) == "0 [] False"
    assert _loaded(_signed(project, store, SIGNING_TOKEN)) == "0 [] False"


def test_a_report_edited_after_publishing_fails_validation_naming_the_signature(project: Path, store: Store) -> None:
    args = _signed(project, store, SIGNING_TOKEN)
    path = next(project.rglob("REPORT.md"))
    data = path.read_bytes().replace(b"Status: completed", b"Status: failed")
    path.chmod(0o644)
    path.write_bytes(data)
    result = run(*args)
    assert result.returncode == 1
    assert json.loads(result.stdout)["errors"] == [PROOF_INVALID]


def lines_of(result: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_all_checks_every_task_of_every_active_change_one_line_each(project: Path, store: Store) -> None:
    good = store.create_task(implementation()).ref
    other = "2026-12-01-other"
    make_change(store.roots.state_root, other)
    broken = store.create_task(review("review-b", change=other)).ref
    (store.roots.task_dir(broken) / "REPORT.md").write_text("half a report\n")  # by hand: return stage, invalid
    result = run("--all", "--repo", str(project))
    assert result.returncode == 1
    found = {(line["change"], line["session"], line["task"]): line for line in lines_of(result)}
    assert set(found) == {(good.change, good.session, good.task), (other, broken.session, broken.task)}
    assert found[(good.change, good.session, good.task)]["ok"] is True
    assert found[(good.change, good.session, good.task)]["stage"] == "dispatch"
    failing = found[(other, broken.session, broken.task)]
    assert (failing["ok"], failing["stage"]) == (False, "return")
    assert failing["errors"]


def test_all_of_one_change_checks_only_its_tasks_and_exits_zero_when_they_pass(project: Path, store: Store) -> None:
    good = store.create_task(implementation()).ref
    other = "2026-12-01-other"
    make_change(store.roots.state_root, other)
    broken = store.create_task(review("review-b", change=other)).ref
    (store.roots.task_dir(broken) / "REPORT.md").write_text("half a report\n")
    result = run("--all", "--change", good.change, "--repo", str(project))
    assert (result.returncode, [line["task"] for line in lines_of(result)]) == (0, [good.task])
    assert run("--all", "--change", other, "--repo", str(project)).returncode == 1


@pytest.mark.parametrize("extra", [["--task", "001-x"], ["--stage", "dispatch"], ["--change"], []])
def test_all_refuses_a_flag_it_does_not_take_with_exit_two(project: Path, extra: list[str]) -> None:
    repo = ["--repo", str(project)] if extra else []
    result = run("--all", *repo, *extra)
    assert result.returncode == 2
    assert result.stdout == ""
    assert "--all" in result.stderr


def test_all_loads_neither_mcp_nor_pydantic(project: Path, store: Store) -> None:
    store.create_task(implementation())
    code = (
        "import sys; from handoff_core.validator import main; "
        f"code = main(['--all', '--repo', {str(project)!r}]); "
        "print(code, sorted(m for m in ('mcp', 'pydantic', 'server') if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.splitlines()[-1] == "0 []"

"""``handoff-mcp`` subcommands other than serve: status, token, doctor."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import pytest

from bench.requests import implementation, report_of, review
from handoff_core.contract.ids import Ref
from handoff_core.services.capabilities.tokens import load_secret, report_token, token_check
from handoff_core.services.writing.store import Store
from server.cli import main
from tests.support.archives import zip_of
from tests.support.wire import SCRIPT


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_status_prints_names_from_the_tree_as_plain_text(
    store: Store, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ref = store.create_task(review()).ref
    round_dir = store.roots.task_dir(ref).parent
    (round_dir / "002-[bold red]x\x1b[31m").mkdir()
    code, out, _ = run(capsys, "status", "--project-root", str(project))
    assert code == 0
    assert "\x1b[31m" not in out
    assert "[bold red]" in out
    assert "\\u001b" in out


def test_status_since_lists_recent_tasks_and_counts_claims_over_all(
    store: Store, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ref = store.create_task(implementation()).ref
    code, out, _ = run(capsys, "status", "--project-root", str(project), "--since", "2100-01-01T00:00:00Z")
    assert code == 0
    assert str(ref) not in out
    assert "writer claims: 1; free writer slots: 0 without writer_limit; 2 with writer_limit=3" in out
    code, out, _ = run(capsys, "status", "--project-root", str(project), "--since", "2000-01-01T00:00:00+00:00")
    assert str(ref) in out
    code, _, err = run(capsys, "status", "--project-root", str(project), "--since", "yesterday")
    assert code != 0
    assert "ISO 8601" in err


def test_the_token_command_is_refused_to_an_executor(
    store: Store, project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ref = store.create_task(implementation()).ref
    secret = str(tmp_path / "secret")
    code, out, err = run(
        capsys, "token", str(ref), "--role", "executor", "--project-root", str(project), "--secret-file", secret
    )
    assert (code, out) == (2, "")
    assert "Lead" in err
    load_secret(Path(secret))  # the Lead's server made it when it started
    code, out, _ = run(
        capsys, "token", str(ref), "--role", "lead", "--project-root", str(project), "--secret-file", secret
    )
    assert code == 0
    assert len(out.strip()) == 24


@pytest.mark.parametrize("client", ["claude-code-cli", "herdr", "orca", "codex-args"])
def test_every_executor_launch_line_sets_the_executor_role_and_token_refuses_there(
    store: Store, project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], client: str
) -> None:
    ref = store.create_task(implementation()).ref
    secret = tmp_path / "secret"
    load_secret(secret)
    code, line, _ = run(capsys, "config", "--role", "executor", "--client", client, "--project-root", str(project))
    words = shlex.split(line)
    assert code == 0
    assert words[:2] == ["env", "HANDOFF_ROLE=executor"]
    # The executor's shell runs what the launch line started with: its handoff-mcp sees that role.
    shell = subprocess.run(
        [*words[:2], str(SCRIPT), "token", str(ref), "--role", "lead", "--secret-file", str(secret),
         "--project-root", str(project)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert (shell.returncode, shell.stdout) == (2, "")
    assert "executor" in shell.stderr


@pytest.mark.slow  # starts processes as another user
def test_an_executor_run_as_another_user_reads_the_task_but_not_the_leads_secret(store: Store) -> None:
    if os.geteuid() != 0 or shutil.which("runuser") is None or shutil.which("useradd") is None:
        pytest.skip("needs root, runuser and useradd to run an executor as another user")
    user = "handoff-exec-test"
    if subprocess.run(["id", user], capture_output=True, timeout=30, check=False).returncode != 0:
        subprocess.run(["useradd", "--no-create-home", "--shell", "/bin/sh", user], check=True, timeout=30)
    shared = Path(tempfile.mkdtemp(prefix="handoff-other-user-"))
    try:
        shared.chmod(0o755)
        secret = shared / "lead" / "secret"
        load_secret(secret)  # the Lead's server makes it: 0600 in a 0700 folder
        ref = store.create_task(implementation()).ref
        task = shared / "TASK.md"
        task.write_bytes(store.queries.read_file(ref, "TASK.md"))
        task.chmod(0o644)

        def as_executor(*command: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                ["runuser", "-u", user, "--", *command], capture_output=True, text=True, timeout=60, check=False
            )

        assert as_executor("cat", str(task)).stdout == task.read_text()
        read = as_executor("/usr/bin/python3", "-c", f"open({str(secret)!r}, 'rb').read()")
        assert read.returncode != 0
        assert "Permission denied" in read.stderr
        assert as_executor("id", "-u").stdout.strip() != "0"
    finally:
        shutil.rmtree(shared)


def dispatched(store: Store, secret_file: Path) -> tuple[Ref, str]:
    """A task dispatched as the Lead's server does it: its TASK records its token's check line."""
    secret = load_secret(secret_file)

    def check(ref: Ref) -> str:
        return token_check(report_token(secret, store.roots.state_root, ref))

    ref = store.create_task(replace(implementation(), token_check=check)).ref
    return ref, report_token(secret, store.roots.state_root, ref)


def test_the_token_is_printed_again_from_the_secret_it_was_derived_from(
    store: Store, project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ref, token = dispatched(store, tmp_path / "lead" / "secret")
    code, out, err = run(
        capsys, "token", str(ref), "--project-root", str(project), "--secret-file", str(tmp_path / "lead" / "secret")
    )
    assert (code, out.strip()) == (0, token)
    assert str(tmp_path / "lead" / "secret") in err


def test_reading_a_token_under_another_home_refuses_and_makes_no_secret(
    store: Store, project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ref, _ = dispatched(store, tmp_path / "lead" / "secret")
    elsewhere = tmp_path / "other-home" / ".config" / "handoff-mcp" / "secret"
    code, out, err = run(capsys, "token", str(ref), "--project-root", str(project), "--secret-file", str(elsewhere))
    assert (code, out) == (2, "")
    assert "token_refused" in err or "no token secret" in err
    assert str(elsewhere) in err
    assert not elsewhere.exists()


def test_reading_a_token_with_another_secret_refuses_naming_the_file(
    store: Store, project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ref, _ = dispatched(store, tmp_path / "lead" / "secret")
    other = tmp_path / "other" / "secret"
    load_secret(other)
    code, out, err = run(capsys, "token", str(ref), "--project-root", str(project), "--secret-file", str(other))
    assert (code, out) == (2, "")
    assert str(other) in err
    assert "check line" in err


def test_doctor_lists_leftovers_and_fixes_only_old_ones(
    store: Store, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ref = store.create_task(implementation()).ref
    task_dir = store.roots.task_dir(ref)
    old_temp = task_dir / ".REPORT.md.0123456789abcdef.tmp"
    old_temp.write_text("half a report")
    fresh_temp = task_dir / ".REPORT.md.fedcba9876543210.tmp"
    fresh_temp.write_text("a publish in flight")
    empty_round = task_dir.parent.parent / "20200101T000000Z"
    empty_round.mkdir()
    long_ago = time.time() - 3600
    os.utime(old_temp, (long_ago, long_ago))
    os.utime(empty_round, (long_ago, long_ago))
    code, out, _ = run(capsys, "doctor", "--project-root", str(project))
    assert code == 0
    assert out.count("temp file") == 2
    assert "empty round" in out
    assert old_temp.exists()  # listing changes nothing
    code, out, _ = run(capsys, "doctor", "--fix", "--project-root", str(project))
    assert "removed 2 of 3" in out
    assert not old_temp.exists()
    assert not empty_round.exists()
    assert fresh_temp.exists()
    assert (task_dir / "TASK.md").exists()


def test_the_lead_token_is_printed_for_the_lead_only(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = str(tmp_path / "secret")
    load_secret(Path(secret))  # made by the team server when it started
    code, out, _ = run(capsys, "token", "--lead", "--project-root", str(project), "--secret-file", secret)
    assert code == 0
    assert len(out.strip()) == 32
    code, out, err = run(capsys, "token", "--lead", "--role", "executor", "--project-root", str(project))
    assert (code, out) == (2, "")
    assert "Lead" in err


def test_package_and_receive_from_the_command_line(
    store: Store, project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ref = store.create_task(review()).ref
    (project / "src").mkdir()
    (project / "src" / "a.py").write_text("x = 1\n")
    (project / ".env").write_text("TOKEN=1\n")
    code, out, _ = run(
        capsys, "package", str(ref), "src", ".env", "--scope", "s1", "--dispatch", "d1", "--project-root", str(project)
    )
    assert code == 0
    assert "d1.outbound.zip" in out
    assert "excluded .env: secrets file" in out
    download = tmp_path / "download.zip"
    download.write_bytes(zip_of(("RETURN.md", b"# Return\n")))
    args = ["--scope", "s1", "--task", ref.task, "--dispatch", "d1", "--attempt", "a1", "--project-root", str(project)]
    code, out, _ = run(capsys, "receive", "--file", str(download), *args)
    assert code == 0
    assert "0 file(s) extracted, 1 kept only in the return ZIP" in out
    assert "  kept: RETURN.md" in out
    hostile = tmp_path / "hostile.zip"
    hostile.write_bytes(zip_of(("../escape", b"x")))
    code, out, err = run(capsys, "receive", "--file", str(hostile), *[a if a != "a1" else "a2" for a in args])
    assert code == 2
    assert "'..'" in err
    held = tmp_path / "held.zip"
    held.write_bytes(zip_of(("RETURN.md", b"# Return\n"), ("conftest.py", b"import os\n")))
    code, out, err = run(capsys, "receive", "--file", str(held), *[a if a != "a1" else "a3" for a in args])
    assert code == 0
    assert "  held: conftest.py: test-runner code or configuration (only --accept conftest.py extracts it)" in out
    assert not list(project.glob("temp/task-delivery/s1/*/d1/inbound/a3/extracted/conftest.py"))
    code, out, err = run(
        capsys, "receive", "--file", str(held), "--accept", "conftest.py", *[a if a != "a1" else "a4" for a in args]
    )
    assert (code, "  held:" in out, "1 file(s) extracted, 1 kept" in out) == (0, False, True)
    assert list(project.glob("temp/task-delivery/s1/*/d1/inbound/a4/extracted/conftest.py"))


def test_receive_refuses_the_token_secret_and_a_kernel_file_and_copies_nothing(
    store: Store, project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ref = store.create_task(review()).ref
    root = ["--project-root", str(project)]
    assert run(capsys, "package", str(ref), "--scope", "s1", "--dispatch", "d1", *root)[0] == 0
    secret = tmp_path / "secret"
    secret.write_bytes(zip_of(("RETURN.md", b"# Return\n")))  # a ZIP, even: still never read
    ids = ["--scope", "s1", "--task", ref.task, "--dispatch", "d1", "--attempt", "a1", *root]
    for path in (str(secret), "/proc/self/environ"):
        code, _, err = run(capsys, "receive", "--file", path, "--secret-file", str(secret), *ids)
        assert (code, err.startswith(f"handoff-mcp: {path} ")) == (2, True), err
    assert not (project / "temp" / "task-delivery" / "s1" / ref.task / "d1" / "inbound").exists()


def test_status_shows_each_reports_proof(store: Store, project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ref = store.create_task(review()).ref
    focused = "Reviewed A1. Kept the API. Stopped after reading. Next: fix."
    store.write_report(
        report_of(ref, status="completed", focused=focused, artifacts="notes", verification="read"),
        ref.change,
    )
    code, out, _ = run(capsys, "status", "--project-root", str(project))
    assert code == 0
    assert "proof" in out
    assert "absent" in out  # written without the token: as by hand


def test_status_json_gives_the_tasks_and_the_writer_slots_for_scripts(
    store: Store, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ref = store.create_task(implementation()).ref
    code, out, _ = run(capsys, "status", "--json", "--project-root", str(project))
    assert code == 0
    shown = json.loads(out)
    assert [(t["ref"], t["state"], t["claim"]) for t in shown["tasks"]] == [
        (str(ref), "dispatched", "current: src/a1/**")
    ]
    assert (shown["writer_claims"], shown["free_writer_slots"]) == (1, 0)
    assert shown["tasks"][0]["proof"] == ""  # no REPORT yet
    assert shown["writers"].startswith("free writer slots: 0 without writer_limit")


def test_the_lead_token_is_refused_from_a_secret_no_server_made(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    elsewhere = tmp_path / "other-home" / ".config" / "handoff-mcp" / "secret"
    code, out, err = run(capsys, "token", "--lead", "--project-root", str(project), "--secret-file", str(elsewhere))
    assert (code, out) == (2, "")
    assert str(elsewhere) in err
    assert not elsewhere.exists()


def test_a_dry_run_of_coordination_save_prints_the_file_and_writes_nothing(
    project: Path, state_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "coordination", "save", "cli", "--dry-run", "--project-root", str(project))
    assert code == 0
    assert out.splitlines()[0] == f"would save {state_root / 'coordination' / 'project.json'}:"
    assert json.loads(out.split(":\n", 1)[1])["defaults"] == {
        "mode": "cli",
        "selection": "preferred",
        "fallback": ["lead"],
    }
    assert not (state_root / "coordination").exists()


def test_the_version_is_the_installed_packages(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib.metadata import version

    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == f"handoff-mcp {version('handoff-mcp')}\n"


def test_the_help_lists_every_command_guard_included(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    listed = {line.split()[0] for line in out.splitlines() if line.startswith("    ") and line.split()}
    assert listed >= {"serve", "status", "token", "doctor", "config", "board", "validate", "guard"}


def test_a_printed_token_ends_its_line(
    store: Store, project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = tmp_path / "lead" / "secret"
    ref, token = dispatched(store, secret)
    code, out, _ = run(capsys, "token", str(ref), "--project-root", str(project), "--secret-file", str(secret))
    assert (code, out) == (0, f"{token}\n")
    code, out, _ = run(capsys, "token", "--lead", "--project-root", str(project), "--secret-file", str(secret))
    assert code == 0
    assert out.endswith("\n")
    assert out.count("\n") == 1

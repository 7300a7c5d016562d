"""A sandboxed launch from the team server's task (``--url``) refuses, before anything is launched or
any server asked, what it cannot use: the launch's own refusal exit, with the reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from handoff_core.services.containment.launch import REFUSED_EXIT, run

REF = "2026-12-05-demo/20261205T080000Z/001-task"
FLAGS = ["--ref", REF, "--task-sha256", "a" * 64, "--url", "http://127.0.0.1:9/executor/mcp"]


def test_a_launch_without_its_report_token_refuses_and_names_the_variable(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert run([*FLAGS, "--token-env", "TASK_TOKEN", "--", "true"], {}) == REFUSED_EXIT
    assert "$TASK_TOKEN is empty" in capsys.readouterr().err


def test_a_launch_outside_any_git_clone_refuses_and_says_where_to_launch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert run([*FLAGS, "--", "true"], {"HANDOFF_TOKEN": "t"}) == REFUSED_EXIT
    assert "is in no git clone" in capsys.readouterr().err

"""Settings come from flags, then HANDOFF_* variables; a wrong one is a ConfigError, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from handoff_core.errors import ConfigError
from server.cli import main
from server.config import settings_from


@pytest.mark.parametrize("value", ["abc", "0", "-1", "1.5", "３"])
def test_a_writer_cap_that_is_not_a_positive_whole_number_is_a_config_error(
    monkeypatch: pytest.MonkeyPatch, project: Path, value: str
) -> None:
    monkeypatch.setenv("HANDOFF_WRITER_CAP", value)
    with pytest.raises(ConfigError) as caught:
        settings_from("lead", str(project), None)
    assert caught.value.code == "config_error"


def test_the_writer_cap_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch, project: Path) -> None:
    monkeypatch.setenv("HANDOFF_WRITER_CAP", "5")
    assert settings_from("lead", str(project), None).writer_cap == 5


def test_the_command_line_says_what_to_fix_and_exits_two(
    monkeypatch: pytest.MonkeyPatch, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HANDOFF_WRITER_CAP", "abc")
    assert main(["status", "--project-root", str(project)]) == 2
    assert "HANDOFF_WRITER_CAP" in capsys.readouterr().err


def test_an_unknown_role_is_a_config_error(project: Path) -> None:
    with pytest.raises(ConfigError):
        settings_from("boss", str(project), None)

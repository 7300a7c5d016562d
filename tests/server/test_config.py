"""Settings come from flags, then HANDOFF_* variables; a wrong one is a ConfigError, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.requests import implementation
from handoff_core.errors import ConfigError, OwnershipConflict
from server.cli import main
from server.config import settings_from
from server.mcp.services import open_store


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


def test_a_role_variant_keeps_every_other_setting(tmp_path: Path) -> None:
    from dataclasses import fields

    from handoff_core.contract.ids import Ref
    from server.config import Settings

    every = Settings(
        role="lead",
        project_root=tmp_path / "project",
        state_root=tmp_path / "state",
        secret_file=tmp_path / "secret",
        writer_cap=7,
        note="found above",
        cache_dir=tmp_path / "cache",
        task=Ref("2026-11-30-demo", "20261130T044500Z", "001-review-a"),
        broker=str(tmp_path / "broker.sock"),
    )
    defaults = Settings(role="lead", project_root=tmp_path, state_root=tmp_path, secret_file=tmp_path)
    unset = [
        f.name for f in fields(Settings) if getattr(every, f.name) == getattr(defaults, f.name) and f.name != "role"
    ]
    assert unset == [], "give every field a value other than its default, so that a dropped one shows"
    variant = every.as_role("executor")
    assert variant.role == "executor"
    assert {f.name: getattr(variant, f.name) for f in fields(Settings) if f.name != "role"} == {
        f.name: getattr(every, f.name) for f in fields(Settings) if f.name != "role"
    }


def stale_cache(folder: Path) -> None:
    """What an older version left in the cache directory: signed-looking verdict and claim files
    whose rows would drop every claim and show every task done, and its cache key."""
    folder.mkdir(mode=0o700)
    (folder / "cache.key").write_bytes(b"k" * 32)
    forged = b"hmac-sha256:" + b"0" * 64 + b'\n{"format":5,"rows":{"bodies":[],"rows":[]}}'
    for name in ("0" * 32 + ".verdicts.json", "0" * 32 + ".claims.json"):
        (folder / name).write_bytes(forged)


@pytest.mark.parametrize("value", ["stale", "off"])
def test_a_cache_directory_left_by_an_older_version_changes_no_answer(
    monkeypatch: pytest.MonkeyPatch, project: Path, tmp_path: Path, value: str
) -> None:
    stale = tmp_path / "stale"
    stale_cache(stale)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HANDOFF_CACHE_DIR", str(stale) if value == "stale" else "off")
    settings = settings_from("lead", str(project), None, str(tmp_path / "config" / "secret"))
    # "off" once turned a cache of verdicts off: now it is the default folder, still never a download's source
    assert settings.cache_dir == (stale if value == "stale" else tmp_path / "xdg" / "handoff-mcp")
    store = open_store(settings)
    ref = store.create_task(implementation()).ref
    with pytest.raises(OwnershipConflict):
        store.create_task(implementation("second-writer", goal="Another change to src/a1."))
    assert [(t.ref, t.label) for t in open_store(settings).queries.status()] == [(ref, "dispatched")]
    assert sorted(p.name for p in stale.iterdir()) == sorted(
        ["cache.key", *(f"{'0' * 32}.{s}.json" for s in ("claims", "verdicts"))]
    )

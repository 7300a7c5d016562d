from __future__ import annotations

import stat
import subprocess
import sys
from pathlib import Path

import pytest

from handoff_core.contract.ids import Ref
from handoff_core.errors import StorageError, TokenRefused, UnsafePath
from handoff_core.services.capabilities.tokens import check_token, load_secret, report_token

REF = Ref("2026-11-30-demo", "20261130T044500Z", "001-a")


def test_the_secret_is_created_once_with_mode_0600(tmp_path: Path) -> None:
    path = tmp_path / "cfg" / "secret"
    first = load_secret(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_secret(path) == first


def test_a_token_opens_exactly_its_own_task(tmp_path: Path) -> None:
    secret = load_secret(tmp_path / "secret")
    token = report_token(secret, tmp_path, REF)
    check_token(secret, tmp_path, REF, token)
    for other in (Ref(REF.change, REF.session, "002-a"), Ref(REF.change, "20261130T044501Z", REF.task)):
        with pytest.raises(TokenRefused) as caught:
            check_token(secret, tmp_path, other, token)
        assert caught.value.code == "token_refused"
    with pytest.raises(TokenRefused):
        check_token(secret, tmp_path / "other-root", REF, token)
    with pytest.raises(TokenRefused):
        check_token(load_secret(tmp_path / "another-secret"), tmp_path, REF, token)


def test_a_secret_inside_the_project_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UnsafePath):
        load_secret(tmp_path / "project" / ".secret", tmp_path / "project")


def test_a_secret_readable_by_others_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "secret"
    load_secret(path)
    path.chmod(0o644)
    with pytest.raises(UnsafePath):
        load_secret(path)


def test_a_symlinked_secret_is_refused(tmp_path: Path) -> None:
    load_secret(tmp_path / "real")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with pytest.raises(StorageError):
        load_secret(tmp_path / "link")


@pytest.mark.parametrize("token", ["tökén", "\u202etoken", "токен-" * 4, "🙂"])
def test_a_token_with_non_ascii_characters_is_refused_not_a_crash(tmp_path: Path, token: str) -> None:
    secret = load_secret(tmp_path / "secret")
    with pytest.raises(TokenRefused):
        check_token(secret, tmp_path, REF, token)


def test_a_secret_path_that_reaches_into_the_project_through_dots_is_refused(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (tmp_path / "other").mkdir()
    project.mkdir()
    with pytest.raises(UnsafePath):
        load_secret(tmp_path / "other" / ".." / "project" / "secret", project)


def test_a_secret_path_through_a_symlinked_folder_into_the_project_is_refused(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "conf").mkdir(parents=True)
    (tmp_path / "link").symlink_to(project / "conf")
    with pytest.raises(UnsafePath):
        load_secret(tmp_path / "link" / "secret", project)
    assert not (project / "conf" / "secret").exists()


@pytest.mark.slow
def test_a_crash_while_making_the_secret_never_leaves_a_short_one(tmp_path: Path) -> None:
    path = tmp_path / "cfg" / "secret"
    child = subprocess.run(
        [sys.executable, "-c", CRASH_DURING_SECRET, str(path)], capture_output=True, timeout=60, check=False
    )
    assert child.returncode == 17, child.stderr.decode()
    assert not path.exists()  # the write never reached the final name
    assert len(load_secret(path)) == 32  # and a later start makes a whole one


# The child dies as it is about to write the secret's bytes (a power cut after the file was made).
CRASH_DURING_SECRET = """
import os, sys
from pathlib import Path
from handoff_core.services.capabilities import tokens
def write(fd, data):
    os._exit(17)
tokens.os.write = write
tokens.load_secret(Path(sys.argv[1]))
"""

"""A cache file outside the project (the guard's TASK copies): used only when this user wrote it."""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from handoff_core.files.cache_file import KEY_FILE, load_cache, save_cache

LIMIT = 1 << 16


@pytest.fixture
def cached(tmp_path: Path) -> Path:
    path = tmp_path / "cache" / "entry.md"
    assert save_cache(path, b"# TASK\n")
    return path


def signed(path: Path, data: bytes, key_file: Path | None = None) -> bytes:
    """``data`` as a cache file is signed (HMAC-SHA256 of its name and bytes under the user's key)."""
    key = (key_file or path.parent / KEY_FILE).read_bytes()
    mac = hmac.new(key, path.name.encode() + b"\0" + data, hashlib.sha256).hexdigest()
    return b"hmac-sha256:" + mac.encode() + b"\n" + data


@given(st.binary(max_size=2048))
def test_what_is_saved_is_loaded_back_whole(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "cache" / "entry"
        assert save_cache(path, data)
        assert load_cache(path, LIMIT) == data


@given(st.lists(st.binary(max_size=512), max_size=8))
def test_what_is_saved_in_parts_made_as_written_is_loaded_back_whole_and_signed(parts: list[bytes]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "cache" / "entry"
        assert save_cache(path, iter(parts))
        assert load_cache(path, LIMIT) == b"".join(parts)
        assert path.read_bytes() == signed(path, b"".join(parts))


def test_a_cache_edited_by_hand_is_not_used(cached: Path) -> None:
    cached.write_bytes(cached.read_bytes().replace(b"TASK", b"EDIT"))
    assert load_cache(cached, LIMIT) is None


def test_a_cache_signed_with_another_key_is_not_used(cached: Path, tmp_path: Path) -> None:
    other_key = tmp_path / "other.key"
    other_key.write_bytes(os.urandom(32))
    cached.write_bytes(signed(cached, b"# forged\n", other_key))
    assert load_cache(cached, LIMIT) is None


def test_a_cache_resigned_with_the_users_key_is_used(cached: Path) -> None:
    """The MAC is the user's: what this user's key signs loads (the check above is the key, not the bytes)."""
    cached.write_bytes(signed(cached, b"# again\n"))
    assert load_cache(cached, LIMIT) == b"# again\n"


def test_a_symlinked_cache_is_not_followed(cached: Path, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    cached.rename(target)
    cached.symlink_to(target)
    assert load_cache(cached, LIMIT) is None


def test_a_cache_over_its_limit_is_not_used(cached: Path) -> None:
    assert load_cache(cached, 3) is None


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_a_cache_owned_by_another_user_is_not_used(cached: Path) -> None:
    os.chown(cached, 65534, 65534)
    assert load_cache(cached, LIMIT) is None


@pytest.mark.parametrize("target", ["file", "directory", "key"])
def test_a_cache_others_could_write_is_ignored_with_a_warning(
    cached: Path, target: str, caplog: pytest.LogCaptureFixture
) -> None:
    {"file": cached, "directory": cached.parent, "key": cached.parent / KEY_FILE}[target].chmod(
        {"file": 0o666, "directory": 0o777, "key": 0o644}[target]
    )
    with caplog.at_level(logging.WARNING, logger="handoff_core.cache"):
        assert load_cache(cached, LIMIT) is None
    assert any("not used" in record.getMessage() for record in caplog.records)


def test_a_cache_that_cannot_be_written_says_so_and_leaves_nothing(tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    assert save_cache(blocked / "cache" / "entry", b"x") is False  # its directory cannot be made under a file
    assert not list(tmp_path.glob("**/*.tmp"))


def test_the_cache_and_its_key_are_private_and_the_key_is_kept_across_saves(cached: Path) -> None:
    key = cached.parent / KEY_FILE
    assert cached.stat().st_mode & 0o777 == 0o600
    assert key.stat().st_mode & 0o777 == 0o600
    before = key.read_bytes()
    assert save_cache(cached.parent / "another.md", b"more")
    assert key.read_bytes() == before

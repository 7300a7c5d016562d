from __future__ import annotations

import multiprocessing
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from bench.requests import implementation
from handoff_core.errors import StorageError, WriteConflict
from handoff_core.files import publishing as publish_module
from handoff_core.files.publishing import new_temp_name, publish, repair_links, replace_whole
from handoff_core.layout import is_temp
from handoff_core.services.writing.store import Store
from tests.support import faults
from tests.support.reports import report_for

ROOT = Path(__file__).resolve().parents[3]


def _dir_fd(path: Path) -> int:
    return os.open(path, os.O_RDONLY | os.O_DIRECTORY)


def test_a_new_name_is_published_read_only_and_reads_back(tmp_path: Path) -> None:
    fd = _dir_fd(tmp_path)
    try:
        result = publish(fd, "REPORT.md", b"hello\n")
    finally:
        os.close(fd)
    assert result.created
    assert (tmp_path / "REPORT.md").read_bytes() == b"hello\n"
    assert stat.S_IMODE((tmp_path / "REPORT.md").stat().st_mode) == 0o444
    assert os.listdir(tmp_path) == ["REPORT.md"]


def test_identical_bytes_again_are_an_idempotent_success(tmp_path: Path) -> None:
    fd = _dir_fd(tmp_path)
    try:
        publish(fd, "REPORT.md", b"same")
        before = (tmp_path / "REPORT.md").stat()
        again = publish(fd, "REPORT.md", b"same")
    finally:
        os.close(fd)
    assert not again.created
    assert (tmp_path / "REPORT.md").stat().st_ino == before.st_ino
    assert os.listdir(tmp_path) == ["REPORT.md"]


def test_other_bytes_are_a_conflict_and_change_nothing(tmp_path: Path) -> None:
    fd = _dir_fd(tmp_path)
    try:
        publish(fd, "REPORT.md", b"first")
        with pytest.raises(WriteConflict) as caught:
            publish(fd, "REPORT.md", b"second")
    finally:
        os.close(fd)
    assert caught.value.code == "write_conflict"
    assert (tmp_path / "REPORT.md").read_bytes() == b"first"
    assert os.listdir(tmp_path) == ["REPORT.md"]


def test_first_wins_keeps_what_another_writer_published_first_and_leaves_no_temp(tmp_path: Path) -> None:
    fd = _dir_fd(tmp_path)
    try:
        publish(fd, "secret", b"theirs", mode=0o600, first_wins=True)
        again = publish(fd, "secret", b"mine", mode=0o600, first_wins=True)
    finally:
        os.close(fd)
    assert not again.created
    assert (tmp_path / "secret").read_bytes() == b"theirs"
    assert stat.S_IMODE((tmp_path / "secret").stat().st_mode) == 0o600
    assert os.listdir(tmp_path) == ["secret"]


def test_a_dangling_symlink_at_the_name_is_a_conflict_and_is_not_followed(tmp_path: Path) -> None:
    (tmp_path / "REPORT.md").symlink_to(tmp_path / "elsewhere")
    fd = _dir_fd(tmp_path)
    try:
        with pytest.raises(WriteConflict):
            publish(fd, "REPORT.md", b"x")
    finally:
        os.close(fd)
    assert not (tmp_path / "elsewhere").exists()


WINNERS_TEMP = ".REPORT.md.0123456789abcdef.tmp"


class WinnerUnlinksAfterTheListing:
    """The winner's unlink of its temp name lands between a loser's listing and its stat."""

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)

    def listdir(self, fd: int) -> list[str]:
        names = os.listdir(fd)
        if WINNERS_TEMP in names:
            os.unlink(WINNERS_TEMP, dir_fd=fd)
        return names


@pytest.mark.parametrize("data", [b"first", b"second"])
def test_a_loser_whose_repair_races_the_winners_own_unlink_still_settles(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data: bytes
) -> None:
    (tmp_path / "REPORT.md").write_bytes(b"first")
    os.link(tmp_path / "REPORT.md", tmp_path / WINNERS_TEMP)  # the winner, between its link and unlink
    monkeypatch.setattr(publish_module, "os", WinnerUnlinksAfterTheListing())
    fd = _dir_fd(tmp_path)
    try:
        if data == b"first":
            assert not publish(fd, "REPORT.md", data).created
        else:
            with pytest.raises(WriteConflict):
                publish(fd, "REPORT.md", data)
    finally:
        os.close(fd)
    assert os.listdir(tmp_path) == ["REPORT.md"]


def _race(state_root: str, ref: str, index: int, barrier: threading.Barrier) -> str:
    from handoff_core.contract.ids import parse_ref
    from handoff_core.errors import HandoffError

    parsed = parse_ref(ref)
    barrier.wait(timeout=60)
    try:
        Store(Path(state_root)).write_report(
            report_for(parsed, f"Writer {index} did it. Tested. Stopped."), parsed.change
        )
    except HandoffError as exc:
        return exc.code
    return "won"


@pytest.mark.slow
def test_sixteen_processes_publishing_one_report_leave_exactly_one_winner(store: Store) -> None:
    ref = store.create_task(implementation()).ref
    context = multiprocessing.get_context("spawn")
    barrier = context.Manager().Barrier(16)
    with context.Pool(16) as pool:
        outcomes = pool.starmap(_race, [(str(store.roots.state_root), str(ref), i, barrier) for i in range(16)])
    assert outcomes.count("won") == 1
    assert sorted(set(outcomes)) == ["won", "write_conflict"]
    winner = outcomes.index("won")
    final = (store.roots.task_dir(ref) / "REPORT.md").read_text()
    assert f"Writer {winner} did it." in final
    assert not [n for n in os.listdir(store.roots.task_dir(ref)) if is_temp(n)]
    retry = store.write_report(report_for(ref, f"Writer {winner} did it. Tested. Stopped."), ref.change)
    assert not retry.created
    assert (store.roots.task_dir(ref) / "REPORT.md").read_text() == final


CRASHES = [
    ("write", 1, "crash-mid-write"),
    ("fsync", 1, "crash-after"),
    ("fchmod", 1, "crash-after"),
    ("link", 1, "crash-after"),
    ("unlink", 1, "crash-before"),
    ("fsync", 2, "crash-before"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("call", "nth", "action"), CRASHES)
def test_a_crash_at_any_step_leaves_no_report_or_a_complete_one(store: Store, call: str, nth: int, action: str) -> None:
    ref = store.create_task(implementation()).ref
    child = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.support.faults",
            str(store.roots.state_root),
            str(ref),
            call,
            str(nth),
            action,
        ],
        cwd=ROOT,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert child.returncode == 17, child.stderr.decode()
    report = store.roots.task_dir(ref) / "REPORT.md"
    before = report.read_bytes() if report.exists() else None
    verdict = store.queries.validate(ref, "return")
    if before is None:
        assert "REPORT.md not found" in verdict.errors
    if any(is_temp(n) for n in os.listdir(store.roots.task_dir(ref))):
        assert any("leftover temp file" in w for w in verdict.warnings)
    retry = store.write_report(report_for(ref), ref.change)
    assert before is None or before == retry.text.encode()
    assert report.read_text() == retry.text
    assert report.stat().st_nlink == 1
    assert store.queries.validate(ref, "return").ok


SYSCALLS = ["open", "write", "fchmod", "fsync", "close", "link", "unlink"]


@pytest.mark.parametrize("call", SYSCALLS)
def test_an_io_error_at_any_system_call_is_a_storage_error_with_nothing_half_written(
    store: Store, call: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    ref = store.create_task(implementation()).ref
    monkeypatch.setattr(publish_module, "os", faults.FaultyOs(call, 1, "eio"))
    with pytest.raises(StorageError) as caught:
        store.write_report(report_for(ref), ref.change)
    assert caught.value.code == "storage_error"
    assert isinstance(caught.value.__cause__, OSError)
    monkeypatch.undo()
    report = store.roots.task_dir(ref) / "REPORT.md"
    clean = store.write_report(report_for(ref), ref.change)
    assert report.read_text() == clean.text


def test_a_temp_left_linked_to_a_name_with_a_line_break_is_repaired(tmp_path: Path) -> None:
    name = "notes\nsecond line.md"  # a name may hold any character but "/" and NUL
    (tmp_path / name).write_bytes(b"published\n")
    temp = new_temp_name(name)
    os.link(tmp_path / name, tmp_path / temp)  # a crash struck between link and unlink
    fd = _dir_fd(tmp_path)
    try:
        assert repair_links(fd, name)
    finally:
        os.close(fd)
    assert os.listdir(tmp_path) == [name]


def test_a_replace_whole_write_replaces_the_file_and_leaves_no_temp(tmp_path: Path) -> None:
    (tmp_path / "project.json").write_bytes(b"old\n")
    fd = _dir_fd(tmp_path)
    try:
        replace_whole(fd, "project.json", b"new ", b"in parts\n", mode=0o640)
    finally:
        os.close(fd)
    assert (tmp_path / "project.json").read_bytes() == b"new in parts\n"
    assert stat.S_IMODE((tmp_path / "project.json").stat().st_mode) == 0o640
    assert os.listdir(tmp_path) == ["project.json"]


def test_a_replace_whole_write_that_fails_keeps_what_was_there_and_leaves_no_temp(tmp_path: Path) -> None:
    (tmp_path / "project.json").mkdir()  # nothing may rename a file over a directory
    fd = _dir_fd(tmp_path)
    try:
        with pytest.raises(IsADirectoryError):
            replace_whole(fd, "project.json", b"new\n")
    finally:
        os.close(fd)
    assert os.listdir(tmp_path) == ["project.json"]
    assert (tmp_path / "project.json").is_dir()

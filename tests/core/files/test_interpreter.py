"""A child interpreter runs this server's code on its question, through the handles it is given."""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from handoff_core.files.interpreter import Child
from tests.support import child_entries
from tests.support.leftovers import children

ENTRY = child_entries.__name__


def listing_through(folder: Path, moved_to: Path | None = None) -> tuple[dict[str, Any] | None, str]:
    """What a child running ``echo_listing`` answers when handed ``folder`` by descriptor (the folder
    renamed to ``moved_to`` first, when given: its path then reaches nothing), and why not."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        if moved_to is not None:
            folder.rename(moved_to)
        child = Child.start((ENTRY, "echo_listing"), json.dumps({"fd": fd}).encode(), (fd,))
        answered = child.answer(timeout=60)
        answer = json.loads(answered.read()) if answered is not None else None
        child.close()
    finally:
        os.close(fd)
    return answer, child.failure


def test_a_child_answers_its_question_through_the_handle_it_is_given(tmp_path: Path) -> None:
    (tmp_path / "seen").mkdir()
    (tmp_path / "seen" / "a-file").write_text("")
    before = set(children())  # what earlier tests left running (a session's servers) is not this test's
    answer, failure = listing_through(tmp_path / "seen", moved_to=tmp_path / "moved")
    assert answer is not None, failure
    assert answer["names"] == ["a-file"]
    assert set(answer["question"]) == {"fd"}
    assert set(children()) <= before


@pytest.mark.parametrize("entry", ["", ".", "cwd"])
def test_neither_the_environment_nor_the_working_directory_chooses_what_a_child_imports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entry: str
) -> None:
    (tmp_path / "json.py").write_text("raise SystemExit('a planted json')\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    # As ``python -m server`` run in a project leaves it: the working directory first on sys.path.
    monkeypatch.setattr(sys, "path", [str(tmp_path) if entry == "cwd" else entry, *sys.path])
    answer, failure = listing_through(tmp_path)
    assert answer is not None, failure
    assert answer["json"] == json.__file__


@pytest.mark.parametrize(("entry", "timeout"), [("fails", 60.0), ("sleeps", 0.3)])
def test_a_child_that_fails_or_is_late_gives_no_answer_and_is_reaped(entry: str, timeout: float) -> None:
    before = set(children())
    child = Child.start((ENTRY, entry), b"", ())
    assert child.answer(timeout=timeout) is None
    assert child.failure
    child.close()
    assert set(children()) <= before


def test_a_question_larger_than_a_pipe_holds_never_stops_the_start_of_a_child_that_has_not_read_it() -> None:
    started: list[Child] = []
    before = set(children())
    starting = threading.Thread(target=lambda: started.append(Child.start((ENTRY, "sleeps"), b"x" * 1_000_000, ())))
    starting.start()
    starting.join(timeout=30)  # bounded: it returns at once, the question waiting in a file
    assert not starting.is_alive()
    (child,) = started
    child.close()
    assert set(children()) <= before


def test_a_child_is_not_started_without_an_executable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.executable", "")
    with pytest.raises(FileNotFoundError):
        Child.start((ENTRY, "fails"), b"", ())

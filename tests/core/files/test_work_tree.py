"""work_tree.state: what the index stages, remembered for the index's bytes, says what git reading the
index as it is says; real repositories."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from handoff_core.files import git_process, work_tree
from tests.support.gitrepo import git as plain_git
from tests.support.gitrepo import new_repo, write


def _head(tree: Path) -> str:
    return plain_git(tree, "rev-parse", "HEAD").stdout.strip()


def _read(tree: Path, as_it_is: bool) -> list[git_process.Change]:
    """The state; ``as_it_is``: git told ``GIT_DIR``, so the index is read in place and nothing remembered."""
    keep = git_process.planted(tree) | {"GIT_WORK_TREE": str(tree)}
    keep |= {"GIT_DIR": str(tree / ".git")} if as_it_is else {}
    return work_tree.state(tree, _head(tree), keep)


def _stage(tree: Path, text: str) -> None:
    """``text`` staged for ``src/a1/core.py``, the work tree's file put back as in HEAD: only the index differs."""
    write(tree, "src/a1/core.py", text)
    plain_git(tree, "add", "src/a1/core.py")
    write(tree, "src/a1/core.py", "x\n")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return new_repo(tmp_path)


def test_a_staged_answer_remembered_for_the_index_bytes_says_what_git_says_of_the_index_in_place(
    tree: Path,
) -> None:
    for step in ("clean", "staged", "staged again", "other bytes", "put back", "new file staged"):
        if step == "staged":
            _stage(tree, "one\n")
        elif step == "other bytes":
            _stage(tree, "two\n")  # the same size: only the index's bytes tell the two apart
        elif step == "put back":
            _stage(tree, "x\n")  # as in HEAD, the index written since: nothing staged
            assert _read(tree, False) == _read(tree, True) == [], step
            _stage(tree, "two\n")
        elif step == "new file staged":
            write(tree, "src/b/new.py")
            plain_git(tree, "add", "src/b/new.py")
            os.unlink(tree / "src/b/new.py")
        first, again, plain = _read(tree, False), _read(tree, False), _read(tree, True)
        assert first == again == plain, step
    assert [(c.status, c.path) for c in plain] == [("M", "src/a1/core.py"), ("A", "src/b/new.py")]


def test_the_same_index_bytes_are_answered_from_memory_and_new_bytes_by_git(tree: Path) -> None:
    _stage(tree, "one\n")
    before = set(work_tree._STAGED)
    _read(tree, False)
    (key,) = set(work_tree._STAGED) - before
    work_tree._STAGED[key] = b"M\0src/b/other.py\0"  # a mark: only an answer from memory names it
    assert [(c.status, c.path) for c in _read(tree, False)] == [("M", "src/b/other.py")]
    _stage(tree, "two\n")  # other bytes: git is asked
    assert [(c.status, c.path) for c in _read(tree, False)] == [("M", "src/a1/core.py")]


def test_an_index_read_in_place_is_never_remembered(tree: Path) -> None:
    _stage(tree, "three\n")
    before = dict(work_tree._STAGED)
    _read(tree, True)
    assert before == work_tree._STAGED


def test_a_split_index_is_read_in_place_and_never_remembered(tree: Path) -> None:
    plain_git(tree, "update-index", "--split-index")
    _stage(tree, "four\n")
    before = dict(work_tree._STAGED)
    assert [(c.status, c.path) for c in _read(tree, False)] == [("M", "src/a1/core.py")]
    assert before == work_tree._STAGED

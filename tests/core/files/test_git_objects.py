"""git_objects: a line of loose commits read from their objects says what ``git rev-list --parents``
says of it, and anything git could read otherwise (a merge, a packed commit stored as a delta, a forged object,
grafts, a shallow repository, a long line) is left to git; real repositories."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from handoff_core.files import git, git_objects
from tests.support.gitrepo import commit_all, new_repo, write
from tests.support.gitrepo import git as run_git


def common_dir(repo: Path) -> bytes:
    return os.fsencode(repo / ".git")


def listed(repo: Path, base: str, checkpoint: str) -> list[list[str]]:
    """What git lists for ``base..checkpoint``: the plain answer the file read must equal."""
    out = run_git(repo, "rev-list", "--parents", checkpoint, "--not", base).stdout
    return [line.split() for line in out.splitlines()]


def head(repo: Path) -> str:
    return run_git(repo, "rev-parse", "HEAD").stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return new_repo(tmp_path)


def commits(repo: Path, count: int, first: int = 0) -> str:
    for index in range(first, first + count):
        write(repo, f"src/a1/f{index}.py", f"{index}\n")
        commit_all(repo, f"commit {index}\n\nparent {'0' * 40}\n")  # a message line that reads as a parent
    return head(repo)


def test_a_line_of_loose_commits_reads_as_git_lists_it_and_the_evidence_agrees(repo: Path) -> None:
    base = head(repo)
    checkpoint = commits(repo, 3)
    line = git_objects.line_of(common_dir(repo), base, checkpoint)
    assert line == listed(repo, base, checkpoint)
    found = git.evidence(repo, base, checkpoint)
    assert (found.descends, found.lineage) == (True, line)


def test_a_merge_is_left_to_git_whose_answer_the_evidence_gives(repo: Path) -> None:
    base = head(repo)
    run_git(repo, "switch", "-q", "-c", "side")
    commits(repo, 1)
    run_git(repo, "switch", "-q", "main")
    write(repo, "src/a1/main.py")
    commit_all(repo)
    run_git(repo, "merge", "-q", "--no-edit", "side")
    checkpoint = head(repo)
    assert git_objects.line_of(common_dir(repo), base, checkpoint) is None
    found = git.evidence(repo, base, checkpoint)
    assert found.descends is True
    assert sorted(found.lineage or []) == sorted(listed(repo, base, checkpoint))


def test_packed_commits_read_as_git_lists_them_and_the_evidence_agrees(repo: Path) -> None:
    base = head(repo)
    checkpoint = commits(repo, 2)
    run_git(repo, "gc", "-q", "--prune=now")
    assert not list((repo / ".git" / "objects").glob("??/*"))  # every object packed
    line = git_objects.line_of(common_dir(repo), base, checkpoint)
    assert line == listed(repo, base, checkpoint)
    assert git.evidence(repo, base, checkpoint).lineage == line


def test_a_packed_commit_whose_bytes_do_not_inflate_to_its_name_is_left_to_git(repo: Path) -> None:
    base = head(repo)
    checkpoint = commits(repo, 1)
    run_git(repo, "gc", "-q", "--prune=now")
    pack = next((repo / ".git" / "objects" / "pack").glob("*.pack"))
    offset = next(
        int(fields[-1])
        for fields in (
            line.split()
            for line in run_git(repo, "verify-pack", "-v", str(pack.with_suffix(".idx"))).stdout.splitlines()
        )
        if len(fields) >= 5 and fields[0] == checkpoint  # name, type, size, packed size, offset
    )
    data = bytearray(pack.read_bytes())
    data[offset + 8] ^= 0xFF  # inside the commit's zlib stream
    pack.chmod(0o644)
    pack.write_bytes(bytes(data))
    assert git_objects.parents_of(common_dir(repo), checkpoint) is None
    assert git_objects.line_of(common_dir(repo), base, checkpoint) is None


def test_an_object_filed_under_another_commits_name_is_not_read(repo: Path) -> None:
    base = head(repo)
    first = commits(repo, 1)
    second = commits(repo, 1, first=1)
    objects = repo / ".git" / "objects"
    target = objects / second[:2] / second[2:]
    target.chmod(0o644)
    shutil.copyfile(objects / first[:2] / first[2:], target)  # the first commit's bytes under the second's name
    assert git_objects.parents_of(common_dir(repo), second) is None
    assert git_objects.line_of(common_dir(repo), base, second) is None


@pytest.mark.parametrize("rewrites", ["shallow", "info/grafts"])
def test_a_repository_that_rewrites_parents_for_git_is_left_to_git(repo: Path, rewrites: str) -> None:
    base = head(repo)
    checkpoint = commits(repo, 1)
    write(repo / ".git", rewrites, "")
    assert git_objects.line_of(common_dir(repo), base, checkpoint) is None


def test_a_line_longer_than_the_bound_and_a_checkpoint_at_the_base_are_left_to_git(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = head(repo)
    checkpoint = commits(repo, 3)
    monkeypatch.setattr(git_objects, "MAX_LINE", 2)
    assert git_objects.line_of(common_dir(repo), base, checkpoint) is None
    assert git_objects.line_of(common_dir(repo), base, base) is None
    monkeypatch.setattr(git_objects, "MAX_LINE", 3)
    assert git_objects.line_of(common_dir(repo), base, checkpoint) == listed(repo, base, checkpoint)


def test_a_name_that_is_no_full_object_name_is_not_a_path(repo: Path) -> None:
    assert git_objects.parents_of(common_dir(repo), "../../etc/passwd") is None
    assert git_objects.parents_of(common_dir(repo), head(repo).upper()) is None

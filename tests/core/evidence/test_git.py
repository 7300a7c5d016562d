"""Git as the evidence runs it: a fixed environment, bounded in time and output, ``-z`` output parsed."""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

import pytest

from handoff_core.errors import GitError
from handoff_core.files import git, git_process, git_remote
from tests.support.gitrepo import add_worktree, commit_all, counting_git, new_repo, started, write
from tests.support.gitrepo import git as git_cli


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return new_repo(tmp_path)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def still_listening(port: int, within: float = 10.0) -> bool:
    """Whether something still listens on ``port`` after ``within`` seconds: a killed process closes its
    socket as it exits, a moment after the kill."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        with socket.socket() as client:
            client.settimeout(1)
            if client.connect_ex(("127.0.0.1", port)) != 0:
                return False
        time.sleep(0.05)  # polled, with a deadline: the exit has no event to wait on from here
    return True


def test_a_git_that_never_ends_is_stopped_at_the_time_bound_with_all_it_started(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(git_process, "TIMEOUT", 1.0)
    port = free_port()  # git daemon reads --port=0 as its own 9418, which another run may hold
    began = time.monotonic()
    with pytest.raises(GitError) as caught:  # git daemon serves until stopped, in a git-daemon child of git
        git_process.run(repo, "daemon", "--listen=127.0.0.1", f"--port={port}", f"--base-path={tmp_path}")
    assert time.monotonic() - began < 10
    assert caught.value.code == "git_error"
    assert "stopped after" in caught.value.message  # the time bound, not a daemon that could not start
    assert not still_listening(port)


def test_output_past_the_bound_is_refused_not_judged(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(git_process, "MAX_OUTPUT", 16)
    with pytest.raises(GitError, match="more than 16 bytes"):
        git.worktrees(repo)


def test_user_configuration_and_hooks_never_reach_the_run(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_DIR", "/nonexistent")  # a caller's GIT_* variables are dropped
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'core.quotepath'='true'")
    write(repo, "src/a1/naïve name.py")
    assert [c.path for c in git.dirty_paths(repo)] == ["src/a1/naïve name.py"]  # not quoted, not split


def test_the_audit_s_reading_lists_the_config_only_when_its_files_may_name_a_driver(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "git-starts.log"
    monkeypatch.setenv("PATH", f"{counting_git(tmp_path / 'bin', log)}{os.pathsep}{os.environ['PATH']}")
    write(repo, "src/b/other.py", "changed\n")
    assert [c.path for c in git.dirty_paths(repo)] == ["src/b/other.py"]
    assert "config" not in started(log)  # the config files, read in place, name no driver
    git_cli(repo, "config", "filter.pristine.clean", "cat")
    log.unlink()
    assert [c.path for c in git.dirty_paths(repo)] == ["src/b/other.py"]
    assert started(log).count("config") == 1


def test_renames_name_both_sides_and_untracked_files_are_listed(repo: Path) -> None:
    base = git.rev_parse(repo, "HEAD")
    assert base is not None
    os.rename(repo / "src/b/other.py", repo / "src/a1/other.py")
    checkpoint = commit_all(repo)
    assert git.changes(repo, base, checkpoint) == [git_process.Change("R", "src/a1/other.py", "src/b/other.py")]
    assert git.evidence(repo, base, checkpoint).descends is True
    assert git.evidence(repo, checkpoint, base).descends is False
    assert git.evidence(repo, "0" * 40, checkpoint).descends is None


def test_linked_worktrees_are_listed_with_their_branches(repo: Path) -> None:
    tree = add_worktree(repo, "task-a")
    found = git.worktrees(repo)
    assert [Path(t.path).resolve() for t in found] == [repo.resolve(), tree.resolve()]
    assert found[1].branch == "refs/heads/task-a"
    assert git.work_tree_of(tree / "src" / "a1") == tree


def test_staged_paths_are_read_on_an_unborn_branch_too(tmp_path: Path) -> None:
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    git_cli(fresh, "init", "-q", "-b", "main")
    write(fresh, "src/a1/first.py")
    git_cli(fresh, "add", "-A")
    assert git.staged_paths(fresh) == [git_process.Change("A", "src/a1/first.py")]


def marking_script(path: Path, marker: Path) -> Path:
    path.write_text(f"#!/bin/sh\ntouch '{marker}'\nexit 1\n")
    path.chmod(0o755)
    return path


def with_remote(repo: Path, tmp_path: Path) -> Path:
    bare = tmp_path / "shared.git"
    git_cli(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    git_cli(repo, "remote", "add", "origin", str(bare))
    return bare


def test_a_remote_s_planted_upload_pack_never_runs(repo: Path, tmp_path: Path) -> None:
    with_remote(repo, tmp_path)
    marker = tmp_path / "upload-pack-ran"
    git_cli(repo, "config", "remote.origin.uploadpack", str(marking_script(tmp_path / "up", marker)))
    assert git_remote.remote_tip(repo, "origin", "main") == git_cli(repo, "rev-parse", "main").stdout.strip()
    assert git_remote.fetch_branch(repo, "origin", "main", "refs/handoff/probe") is not None
    assert not marker.exists()


def test_no_other_git_reaches_a_remote(repo: Path, tmp_path: Path) -> None:
    with_remote(repo, tmp_path)
    for args in (("ls-remote", "--", "origin"), ("fetch", "--", "origin", "+refs/heads/main:refs/handoff/probe")):
        with pytest.raises(GitError, match="transport 'file' not allowed") as caught:
            git_process.run(repo, *args)
        assert caught.value.code == "git_error"


@pytest.mark.parametrize("plant", ["vcs", "ext", "git"])
def test_a_transport_the_repository_plants_never_runs(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, plant: str
) -> None:
    """A remote helper on the PATH (``remote.X.vcs``), the ``ext::`` command transport or a git:// proxy,
    each with the repository's config allowing it: nothing planted runs. The fetch reads only the
    remote's URL: a helper's remote is fetched from its URL, the others are refused."""
    with_remote(repo, tmp_path)
    marker = tmp_path / "transport-ran"
    (tmp_path / "bin").mkdir()
    helper = marking_script(tmp_path / "bin" / "git-remote-planted", marker)
    monkeypatch.setenv("PATH", f"{helper.parent}{os.pathsep}{os.environ['PATH']}")
    config = {
        "vcs": {"remote.origin.vcs": "planted", "protocol.planted.allow": "always"},
        "ext": {"remote.origin.url": f"ext::{helper} %S", "protocol.ext.allow": "always"},
        "git": {"remote.origin.url": "git://127.0.0.1/x", "core.gitProxy": str(helper)},
    }[plant]
    for key, value in config.items():
        git_cli(repo, "config", key, value)
    tip = git_remote.fetch_branch(repo, "origin", "main", "refs/handoff/probe")
    assert (tip is not None) == (plant == "vcs")
    try:  # what reached the remote, as the audit asks it: the same transport, or a refusal
        listed = bool(git_remote.remote_refs(repo, "origin"))
    except GitError:
        listed = False
    assert listed == (plant == "vcs")
    assert not marker.exists()


def test_ancestry_and_the_commits_from_one_rev_list_answer_as_merge_base_and_rev_list_do(repo: Path) -> None:
    """Every pair of a history with a merge, a tag object and a tree: ``evidence`` (one ``rev-list
    --boundary``) says what ``merge-base --is-ancestor`` says, and lists the commits ``rev-list`` does."""
    first = git_cli(repo, "rev-parse", "HEAD").stdout.strip()
    git_cli(repo, "checkout", "-q", "-b", "side")
    write(repo, "src/b/side.py")
    side = commit_all(repo, "side")
    git_cli(repo, "checkout", "-q", "main")
    write(repo, "src/a1/main.py")
    main = commit_all(repo, "main")
    git_cli(repo, "merge", "-q", "--no-edit", "side")
    merged = git_cli(repo, "rev-parse", "HEAD").stdout.strip()
    git_cli(repo, "tag", "-a", "-m", "t", "v1", side)
    tag = git_cli(repo, "rev-parse", "v1").stdout.strip()
    tree = git_cli(repo, "rev-parse", "HEAD^{tree}").stdout.strip()
    names = [first, side, main, merged, tag, tree, "0" * 40]
    for base in names:
        for checkpoint in names:
            found = git.evidence(repo, base, checkpoint)
            assert found.descends == git.is_ancestor(repo, base, checkpoint), (base, checkpoint)
            if found.descends:
                listed = git_cli(repo, "rev-list", "--parents", f"{base}..{checkpoint}").stdout.split("\n")
                assert sorted(" ".join(line) for line in found.lineage or []) == sorted(filter(None, listed))

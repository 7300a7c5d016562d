"""The submodule walk against git itself. ``may_hold_gitlinks`` finds a gitlink in the index exactly
where ``git ls-files`` lists one, in every index version, and is unsure of any index it cannot read whole.
``submodule_listing`` on a submodule's ``core.worktree``: for generated submodule configs (the value in
every spelling git reads, in and out of ``[core]``, continued lines, comments, quotes,
``config.worktree``), it refuses exactly where git's own status no longer sees a change made inside the
submodule, and reads the config git writes in place, without a ``git config`` start."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from handoff_core.errors import GitError
from handoff_core.files.submodules import SUBMODULE_LISTING, may_hold_gitlinks, submodule_listing
from tests.support.gitrepo import ENV, git, make_repo, write

pytestmark = pytest.mark.slow  # real git


class Layout:
    """A project with an absorbed submodule ``sub`` whose README.md is changed, a clean copy of the
    submodule's files (``decoy``), and another name for the submodule's folder (``alias``)."""

    def __init__(self, root: Path) -> None:
        self.project, self.sub, self.decoy, self.alias = (
            root / "project",
            root / "project/sub",
            root / "decoy",
            root / "alias",
        )
        self.sub.mkdir(parents=True)
        make_repo(self.project)
        make_repo(self.sub)
        git(self.project, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(self.sub), "sub")
        git(self.project, "commit", "-q", "-m", "submodule")
        git(self.project, "submodule", "absorbgitdirs")
        self.git_dir = self.project / ".git/modules/sub"
        self.config = (self.git_dir / "config").read_bytes()
        for name in ("src/a1/core.py", "src/b/other.py", "README.md", ".gitignore"):
            write(self.decoy, name, (self.sub / name).read_text())
        self.alias.symlink_to(self.sub)
        write(self.sub, "README.md", "changed inside the submodule\n")

    def asks(self) -> tuple[bool, list[tuple[str, ...]]]:
        """Whether ``submodule_listing`` refuses the project, and the git commands it asked for."""
        asked: list[tuple[str, ...]] = []

        def ask(cwd: str, args: tuple[str, ...], ok: tuple[int, ...]) -> bytes:
            asked.append(args)
            done = subprocess.run(
                ["git", "-C", cwd, *args],
                env=ENV | {"GIT_WORK_TREE": cwd},
                capture_output=True,
                timeout=60,
                check=False,
            )
            assert done.returncode in ok, done.stderr
            return done.stdout

        try:
            submodule_listing(str(self.project), ask)
        except GitError as exc:
            refused = exc.code == "git_error"
        else:
            refused = False
        return refused, asked

    def git_sees_the_change(self) -> bool | None:
        """Whether git's own status of the project sees the change inside the submodule; None when it fails."""
        done = git(self.project, "status", "--porcelain", "--ignore-submodules=none", check=False)
        return None if done.returncode else " sub\n" in done.stdout


@pytest.fixture(scope="module")
def layout(tmp_path_factory: pytest.TempPathFactory) -> Layout:
    return Layout(tmp_path_factory.mktemp("submodule"))


def fragments(layout: Layout) -> st.SearchStrategy[list[bytes]]:
    decoy, relative = bytes(layout.decoy), os.fsencode(os.path.relpath(layout.decoy, layout.git_dir))
    values = [decoy, relative, b"../../../sub", bytes(layout.sub), bytes(layout.alias), b"/nowhere"]
    value = st.sampled_from(values)
    lines = st.one_of(
        value.map(lambda v: b"[core]\n\tworktree = " + v + b"\n"),
        value.map(lambda v: b"[CORE]\n  WorkTree=" + v + b"\n"),
        value.map(lambda v: b"\tworktree = " + v + b"\n"),  # under whichever section comes before
        value.map(lambda v: b"[core] worktree = " + v + b"\n"),
        value.map(lambda v: b'[core "x"]\n\tworktree = ' + v + b"\n"),
        value.map(lambda v: b"[core.x]\n\tworktree = " + v + b"\n"),
        value.map(lambda v: b"[core]\n\tworktree = " + v + b" ; a comment\n"),
        value.map(lambda v: b'[core]\n\tworktree = "' + v + b'"\n'),
        value.map(lambda v: b"[core]\n\tx = a\\\n\tworktree = " + v + b"\n"),  # a continued line: x's value
        value.map(lambda v: b"# worktree = " + v + b"\n"),
        st.sampled_from(
            [
                b'[remote "origin"]\n\turl = /elsewhere\n',
                b"[extensions]\n\tworktreeConfig = true\n",  # then git reads config.worktree too
                b"[user]\n\tname = worktree\n",
                b"[core]\n\tbare = false\n",
            ]
        ),
    )
    return st.lists(lines, max_size=4)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_submodule_config_is_refused_exactly_where_git_no_longer_sees_the_change_inside(
    layout: Layout, data: st.DataObject
) -> None:
    config = layout.config + b"".join(data.draw(fragments(layout), label="config"))
    rarely: st.SearchStrategy[list[bytes]] = st.one_of(
        st.just([]), st.just([]), st.just([]), fragments(layout)
    )  # else git is asked each time
    worktree_config = b"".join(data.draw(rarely, label="config.worktree"))
    (layout.git_dir / "config").write_bytes(config)
    (layout.git_dir / "config.worktree").write_bytes(worktree_config)
    try:
        refused, _ = layout.asks()
        seen = layout.git_sees_the_change()
    finally:
        (layout.git_dir / "config.worktree").unlink()
        (layout.git_dir / "config").write_bytes(layout.config)
    if seen is not None:  # git that fails to read the submodule fails the status or the audit anyway
        assert refused == (not seen)


def test_the_config_git_writes_for_an_absorbed_submodule_is_read_without_a_git_config(layout: Layout) -> None:
    for config in (
        layout.config,
        layout.config + b'[remote "origin"]\n\turl = /x\n[extensions]\n\tworktreeConfig = 1\n',
    ):
        (layout.git_dir / "config").write_bytes(config)
        try:
            refused, asked = layout.asks()
        finally:
            (layout.git_dir / "config").write_bytes(layout.config)
        assert not refused
        assert SUBMODULE_LISTING not in asked
        assert asked  # the gitlinks were listed: the submodule was found


def test_a_core_worktree_that_can_only_be_read_by_git_costs_one_git_config(layout: Layout) -> None:
    (layout.git_dir / "config").write_bytes(layout.config + b"[alias]\n\tx = a\\\n\tb\n")  # a continued line
    try:
        refused, asked = layout.asks()
    finally:
        (layout.git_dir / "config").write_bytes(layout.config)
    assert not refused
    assert asked.count(SUBMODULE_LISTING) == 1


ENTRY_NAMES = st.text(alphabet="abcé/", min_size=1, max_size=12).filter(
    lambda name: "//" not in name and not name.startswith("/") and not name.endswith("/")
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    entries=st.dictionaries(ENTRY_NAMES, st.booleans(), max_size=6),
    version=st.sampled_from(["2", "3", "4"]),
)
def test_the_index_proof_finds_a_gitlink_exactly_where_git_lists_one(
    tmp_path_factory: pytest.TempPathFactory, entries: dict[str, bool], version: str
) -> None:
    tree = tmp_path_factory.mktemp("index")
    git(tree, "init", "-q")
    blob = git(tree, "hash-object", "-w", "--stdin").stdout.strip()
    gitlink = "1" * 40
    for name, is_gitlink in entries.items():  # a name that is another's folder: git refuses, as it would
        info = f"160000,{gitlink},{name}" if is_gitlink else f"100644,{blob},{name}"
        git(tree, "update-index", "--add", "--cacheinfo", info, check=False)
    git(tree, "update-index", "--index-version", version)
    listed = git(tree, "ls-files", "-s", "-z").stdout.split("\0")
    assert may_hold_gitlinks(str(tree)) == any(record.startswith("160000 ") for record in listed)


def test_a_split_index_an_odd_index_or_no_repository_may_hold_gitlinks(tmp_path: Path) -> None:
    make_repo(tmp_path)
    assert not may_hold_gitlinks(str(tmp_path))
    git(tmp_path, "update-index", "--split-index")
    assert may_hold_gitlinks(str(tmp_path))
    git(tmp_path, "update-index", "--no-split-index")
    for name in os.listdir(tmp_path / ".git"):
        if name.startswith("sharedindex."):
            os.unlink(tmp_path / ".git" / name)
    assert not may_hold_gitlinks(str(tmp_path))
    index = tmp_path / ".git/index"
    index.rename(tmp_path / ".git/index.real")
    index.symlink_to(tmp_path / ".git/index.real")
    assert may_hold_gitlinks(str(tmp_path))
    assert may_hold_gitlinks(str(tmp_path / "no-repository-here"))

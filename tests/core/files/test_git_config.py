"""``names_nothing`` against git itself: for generated repository configs (filter drivers in every
spelling, includes, ``config.worktree``, ``core.worktree``, linked worktrees; protocols, which the
environment closes, so that nothing lists them), it answers True only where ``git config
--get-regexp LISTED`` lists nothing, and True wherever no file holds a word it looks for. Every odd
layout is an "ask git", and a FIFO never blocks it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from handoff_core.files.git_config import (
    LISTED,
    MAX_READ,
    names_nothing,
    overrides,
    sets_attributes,
    silent,
)
from tests.support.gitrepo import ENV, add_worktree, git, make_repo

pytestmark = pytest.mark.slow  # real git
BASE = b"[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n"
QUIET = [
    b"[user]\n\tname = Someone\n",
    b"[alias]\n\tst = status --short\n",
    b"[core]\n\tlogAllRefUpdates = true\n",
    b'[remote "origin"]\n\turl = https://example.invalid/r.git\n',
    b"; a comment\n# another\n",
    b"[extensions]\n\tworktreeConfig = true\n",  # then git reads config.worktree too
    b'[protocol "ext"]\n\tallow = always\n',  # GIT_ALLOW_PROTOCOL beats it: nothing to overrule
    b'[Protocol "custom"]\n\tallow = always\n',
]
NAMING = [
    b'[filter "lfs"]\n\tclean = touch planted\n',
    b'[FiLtEr "x"]\n\tsmudge = cat\n',
    b"[filter.x]\n\tprocess = cat\n",
    b'[FILTER "a.b"]\n\trequired = true\n',
]
SILENT_WORDS = [b"# mentions filter only in a comment\n", b"[core]\n\tcomment = PROTOCOL\n"]  # git lists nothing


@pytest.fixture(scope="module")
def repository(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path, Path]:
    """A repository, a linked worktree of it, a file that defines a filter (to be included) and a
    repository elsewhere whose own config names a filter (a ``core.worktree`` target)."""
    root = tmp_path_factory.mktemp("git-config")
    project = repo(root / "project")
    linked = add_worktree(project, "task-a")
    included = root / "included.cfg"
    included.write_bytes(b'[filter "inc"]\n\tclean = touch planted\n')
    elsewhere = repo(root / "elsewhere")
    git(elsewhere, "config", "filter.there.clean", "touch planted")
    return project, linked, included, elsewhere


def repo(path: Path) -> Path:
    path.mkdir(parents=True)
    make_repo(path)
    return path


def listed(tree: Path) -> bytes:
    """What git lists of the repository's own config (no command-line configuration)."""
    done = subprocess.run(
        ["git", "-C", str(tree), "config", "-z", "--get-regexp", LISTED],
        env=ENV,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    return done.stdout


def fragments(included: Path, elsewhere: Path) -> st.SearchStrategy[list[bytes]]:
    includes = [
        b"[include]\n\tpath = " + bytes(included) + b"\n",
        b'[includeIf "gitdir:/"]\n\tpath = ' + bytes(included) + b"\n",
        b"[Include]\n\tpath = /nowhere.cfg\n",
    ]
    worktree = [b"[core]\n\tworktree = " + bytes(elsewhere) + b"\n"]  # another work tree, the same config
    choices = [*QUIET, *NAMING, *includes, *worktree, *SILENT_WORDS]
    return st.lists(st.sampled_from(choices), max_size=4)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_the_fast_answer_is_true_only_where_git_lists_nothing_and_wherever_no_file_holds_a_word(
    repository: tuple[Path, Path, Path, Path], data: st.DataObject
) -> None:
    project, linked, included, elsewhere = repository
    common = project / ".git"
    tree = data.draw(st.sampled_from([project, linked]), label="tree")
    config = data.draw(st.booleans(), label="bom") * b"\xef\xbb\xbf" + BASE
    config += b"".join(data.draw(fragments(included, elsewhere), label="config"))
    worktree_config = b"".join(data.draw(fragments(included, elsewhere), label="config.worktree"))
    git_dir = common if tree == project else common / "worktrees" / tree.name
    (common / "config").write_bytes(config)
    (git_dir / "config.worktree").write_bytes(worktree_config)
    try:
        fast = names_nothing(str(tree))
        listing = listed(tree)
    finally:
        (git_dir / "config.worktree").unlink()
        (common / "config").write_bytes(BASE)
    if fast:
        assert listing == b""
        assert overrides(listing) == overrides(b"")
    assert fast == (silent(config) and silent(worktree_config))


def test_a_plain_repository_and_its_linked_worktree_need_no_listing(tmp_path: Path) -> None:
    repo(tmp_path / "p")
    linked = add_worktree(tmp_path / "p", "t")
    assert names_nothing(str(tmp_path / "p"))
    assert names_nothing(str(linked))
    assert listed(tmp_path / "p") == listed(linked) == b""


def test_a_relative_gitdir_file_is_followed_as_git_follows_it(tmp_path: Path) -> None:
    repo(tmp_path / "p")
    linked = add_worktree(tmp_path / "p", "t")
    (linked / ".git").write_text(f"gitdir: ../p/.git/worktrees/{linked.name}\n")
    assert git(linked, "rev-parse", "--git-dir").stdout.strip().endswith(f"worktrees/{linked.name}")
    assert names_nothing(str(linked))


def odd_layouts(root: Path) -> dict[str, Path]:
    """Each a tree git could read otherwise, or a file this must not trust: all ask git."""
    repo(root / "p")
    (root / "p" / "sub").mkdir()  # no .git of its own: git would search upward
    linked = add_worktree(root / "p", "t")
    (root / "linked-git").symlink_to(root / "p" / ".git")
    (root / "linked").mkdir()
    (root / "linked" / ".git").symlink_to(root / "linked-git")
    (root / "p" / "empty" / ".git").mkdir(parents=True)  # git would take the repository above instead
    (root / "odd-gitdir").mkdir()
    (root / "odd-gitdir" / ".git").write_text(f"gitdir:{linked}\n")
    (root / "two-lines").mkdir()
    (root / "two-lines" / ".git").write_text(f"gitdir: {root / 'p/.git/worktrees' / linked.name}\n\nmore\n")
    for name, config in (("big", b"#" * (MAX_READ + 1) + b"\n"), ("fifo", None), ("symlink", None)):
        repo(root / name)
        path = root / name / ".git" / "config"
        path.unlink()
        if config is not None:
            path.write_bytes(BASE + config)
        elif name == "fifo":
            os.mkfifo(path)
        else:
            (root / f"{name}.cfg").write_bytes(BASE)
            path.symlink_to(root / f"{name}.cfg")
    repo(root / "odd-head")
    (root / "odd-head" / ".git" / "HEAD").write_text("not a ref\n")
    odd_common = add_worktree(root / "p", "u")
    (root / "p" / ".git" / "worktrees" / odd_common.name / "commondir").write_text("../..\n\n")
    names = ("linked", "odd-gitdir", "two-lines", "big", "fifo", "symlink", "odd-head")
    inside = {"sub": root / "p" / "sub", "empty-git": root / "p" / "empty", "odd-commondir": odd_common}
    return {name: root / name for name in names} | inside


def test_every_odd_layout_asks_git_and_a_fifo_never_blocks(tmp_path: Path) -> None:
    layouts = odd_layouts(tmp_path)
    code = "import json, sys; from handoff_core.files.git_config import names_nothing as n; "
    code += "print(json.dumps([n(a) for a in sys.argv[1:]]))"
    done = subprocess.run(
        [sys.executable, "-c", code, *map(str, layouts.values())],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert dict(zip(layouts, json.loads(done.stdout), strict=True)) == dict.fromkeys(layouts, False)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (None, False),
        (b"", False),
        (b"# comment\n\n  # indented\n", False),
        (b"* ident\n", True),
        (b"#x\n a.py eol=crlf", True),
    ],
)
def test_an_attributes_file_sets_attributes_when_a_line_is_a_rule(
    tmp_path: Path, text: bytes | None, expected: bool
) -> None:
    path = tmp_path / "attributes"
    if text is not None:
        path.write_bytes(text)
    assert sets_attributes(os.fsencode(path)) is expected


def test_an_attributes_file_that_is_a_link_a_fifo_or_too_big_counts_as_setting_some(tmp_path: Path) -> None:
    (tmp_path / "empty").write_bytes(b"")
    (tmp_path / "link").symlink_to(tmp_path / "empty")
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "big").write_bytes(b"#" * (MAX_READ + 1))
    for name in ("link", "fifo", "big"):
        assert sets_attributes(os.fsencode(tmp_path / name))

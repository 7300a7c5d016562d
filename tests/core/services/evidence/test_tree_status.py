"""The hook's ``git status`` answers as the evidence layer's does, without the subprocess module."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from handoff_core.files import git as files_git
from handoff_core.files.git_config import names_nothing
from handoff_core.layout import REPORT_STATUSES
from handoff_core.services.evidence.stop_check import STATUSES
from handoff_core.services.evidence.tree_status import StatusFailed, changed_paths, start_status
from tests.support.gitrepo import git, make_repo, write


def test_the_stop_hook_names_the_contract_s_statuses() -> None:
    assert STATUSES == REPORT_STATUSES


@pytest.mark.slow
def test_changed_paths_match_the_evidence_layer_s_dirty_paths(tmp_path: Path) -> None:
    make_repo(tmp_path)
    write(tmp_path, "src/a1/core.py", "changed\n")
    write(tmp_path, "new dir/ünïcode file.txt")
    git(tmp_path, "mv", "src/b/other.py", "src/b/renamed.py")
    (tmp_path / "README.md").unlink()
    ours = sorted(changed_paths(str(tmp_path)))
    theirs = sorted(
        (change.status, side)
        for change in files_git.dirty_paths(tmp_path)
        for side in (change.path, change.old_path)
        if side
    )
    assert {path for _, path in ours} == {path for _, path in theirs}
    assert ("?", "new dir/ünïcode file.txt") in ours


@pytest.mark.slow
def test_statuses_started_side_by_side_each_say_what_their_own_tree_changed(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    for tree, name in ((first, "src/a1/core.py"), (second, "src/b/other.py")):
        tree.mkdir()
        make_repo(tree)
        write(tree, name, "changed\n")
    running = [start_status(str(first)), start_status(str(second))]
    assert running[1].paths() == [("M", "src/b/other.py")]  # read in either order
    assert running[0].paths() == [("M", "src/a1/core.py")]


@pytest.mark.slow
def test_a_status_dropped_unread_leaves_no_git_behind(tmp_path: Path) -> None:
    make_repo(tmp_path)
    running = start_status(str(tmp_path))
    running.drop()
    with pytest.raises(ChildProcessError):  # killed and reaped: no such child is left
        os.waitpid(running.pid, os.WNOHANG)
    running.drop()  # a second drop, or one after a read, does nothing
    read = start_status(str(tmp_path))
    assert read.paths() == []
    read.drop()
    with pytest.raises(ChildProcessError):
        os.waitpid(read.pid, os.WNOHANG)


@pytest.mark.slow
def test_a_folder_that_is_no_repository_is_an_error_not_a_clean_tree(tmp_path: Path) -> None:
    with pytest.raises(StatusFailed):
        changed_paths(str(tmp_path))


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="giving the repository to another user needs root")
def test_a_repository_another_user_owns_is_an_error_though_its_config_names_nothing(tmp_path: Path) -> None:
    make_repo(tmp_path)
    assert names_nothing(str(tmp_path))  # the listing is skipped: git's own ownership check still refuses
    for path in [tmp_path, *tmp_path.rglob("*")]:
        os.chown(path, 65534, 65534, follow_symlinks=False)
    with pytest.raises(StatusFailed):
        changed_paths(str(tmp_path))


@pytest.mark.slow
def test_a_core_worktree_set_elsewhere_hides_no_change_of_the_tree(tmp_path: Path) -> None:
    project, decoy = tmp_path / "project", tmp_path / "decoy"
    project.mkdir()
    make_repo(project)
    for relative in ("src/a1/core.py", "src/b/other.py", "README.md", ".gitignore"):
        write(decoy, relative, (project / relative).read_text())
    git(project, "config", "core.worktree", str(decoy))  # git would read the decoy, a copy of HEAD
    write(project, "src/a1/core.py", "changed outside the claim\n")
    write(project, "planted.py")
    assert names_nothing(str(project))
    changed = changed_paths(str(project))
    assert ("M", "src/a1/core.py") in changed
    assert ("?", "planted.py") in changed


def _submodule_with_planted_filter(tmp_path: Path) -> tuple[Path, Path]:
    """A project whose submodule's own config names a clean filter that leaves a mark and answers
    the committed text, so a changed file inside the submodule would hash as unchanged."""
    sub, project, mark = tmp_path / "sub", tmp_path / "project", tmp_path / "ran"
    _attributed_repo(sub)
    project.mkdir()
    make_repo(project)
    git(project, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub), "sub")
    git(project, "commit", "-q", "-m", "submodule")
    git(project / "sub", "config", "filter.hide.clean", f"touch {mark}; printf 'x\\n'")
    write(project, "sub/README.md", "y\n")  # the committed size: git hashes it (through the filter) to compare
    return project, mark


@pytest.mark.slow
def test_a_filter_a_submodule_s_config_names_never_runs(tmp_path: Path) -> None:
    project, mark = _submodule_with_planted_filter(tmp_path)
    changed = changed_paths(str(project))
    assert not mark.exists()
    assert ("M", "sub") in changed


def _attributed_repo(path: Path) -> None:
    """A repository whose committed .gitattributes sends README.md through the filter ``hide``."""
    path.mkdir(parents=True)
    make_repo(path)
    write(path, ".gitattributes", "README.md filter=hide\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "attributes")


def _planting_repo(path: Path, mark: Path) -> None:
    """A repository whose README.md goes through a clean filter its own config names: the filter
    leaves ``mark`` and answers the committed text, so a changed README.md would hash as unchanged."""
    _attributed_repo(path)
    git(path, "config", "filter.hide.clean", f"touch {mark}; printf 'x\\n'")
    write(path, "README.md", "y\n")


@pytest.mark.slow
def test_a_filter_a_nested_submodule_s_config_names_never_runs_in_either_runner(tmp_path: Path) -> None:
    inner, middle, project, mark = tmp_path / "inner", tmp_path / "middle", tmp_path / "project", tmp_path / "ran"
    inner.mkdir()
    make_repo(inner)
    git(inner, "config", "filter.hide.clean", "cat")
    write(inner, ".gitattributes", "README.md filter=hide\n")
    git(inner, "add", "-A")
    git(inner, "commit", "-q", "-m", "attributes")
    middle.mkdir()
    make_repo(middle)
    git(middle, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(inner), "inner")
    git(middle, "commit", "-q", "-m", "inner")
    project.mkdir()
    make_repo(project)
    git(project, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(middle), "middle")
    git(project, "-c", "protocol.file.allow=always", "submodule", "update", "-q", "--init", "--recursive")
    git(project, "commit", "-q", "-m", "middle")
    nested = project / "middle/inner"
    git(nested, "config", "filter.hide.clean", f"touch {mark}; printf 'x\\n'")
    write(nested, "README.md", "y\n")
    assert ("M", "middle") in changed_paths(str(project))
    assert ("M", "middle") in [(c.status, c.path) for c in files_git.dirty_paths(project)]
    assert not mark.exists()


@pytest.mark.slow
@pytest.mark.parametrize(
    "setting",
    [("diff.ignoreSubmodules", "all"), ("submodule.inner.ignore", "all"), ("submodule.inner.ignore", "dirty")],
)
def test_a_submodule_s_config_hides_no_change_in_a_submodule_nested_in_it(
    tmp_path: Path, setting: tuple[str, str]
) -> None:
    inner, middle, project = tmp_path / "inner", tmp_path / "middle", tmp_path / "project"
    for path in (inner, middle, project):
        path.mkdir()
        make_repo(path)
    git(middle, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(inner), "inner")
    git(middle, "commit", "-q", "-m", "inner")
    git(project, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(middle), "middle")
    git(project, "-c", "protocol.file.allow=always", "submodule", "update", "-q", "--init", "--recursive")
    git(project, "commit", "-q", "-m", "middle")
    git(project / "middle", "config", *setting)  # the child git in middle reads it; no option of ours reaches it
    write(project, "middle/inner/README.md", "changed two levels down\n")
    assert git(project, "status", "--porcelain", "--ignore-submodules=none").stdout == ""  # git is fooled
    hook, audit = changed_paths(str(project)), [(c.status, c.path) for c in files_git.dirty_paths(project)]
    assert ("M", "middle") in hook
    assert ("M", "middle") in audit


@pytest.mark.slow
def test_a_filter_in_a_repository_staged_as_a_bare_gitlink_never_runs(tmp_path: Path) -> None:
    project, mark = tmp_path / "project", tmp_path / "ran"
    project.mkdir()
    make_repo(project)
    _planting_repo(project / "inner", mark)
    git(project, "add", "inner")  # a gitlink in the index and no .gitmodules entry
    assert not (project / ".gitmodules").exists()
    assert ("A", "inner") in changed_paths(str(project))
    assert not mark.exists()


@pytest.mark.slow
def test_more_submodules_than_can_be_checked_are_an_error_never_a_clean_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from handoff_core.errors import GitError
    from handoff_core.files import submodules

    project, mark = tmp_path / "project", tmp_path / "ran"
    project.mkdir()
    make_repo(project)
    for name in ("one", "two"):
        _planting_repo(project / name, mark)
        git(project, "add", name)
    git(project, "commit", "-q", "-m", "gitlinks")
    monkeypatch.setattr(submodules, "MAX_SUBMODULES", 1)
    with pytest.raises(StatusFailed):
        changed_paths(str(project))
    with pytest.raises(GitError):
        files_git.dirty_paths(project)
    assert not mark.exists()


@pytest.mark.slow
def test_a_submodule_config_git_cannot_list_is_an_error_never_a_clean_tree(tmp_path: Path) -> None:
    from handoff_core.errors import GitError

    project, mark = tmp_path / "project", tmp_path / "ran"
    project.mkdir()
    make_repo(project)
    _planting_repo(project / "inner", mark)
    git(project, "add", "inner")
    git(project, "commit", "-q", "-m", "gitlink")
    with (project / "inner/.git/config").open("a") as config:
        config.write('[filter "broken\n')  # no config listing can read it
    with pytest.raises(StatusFailed):
        changed_paths(str(project))
    with pytest.raises(GitError):
        files_git.dirty_paths(project)
    assert not mark.exists()


def _with_submodule(tmp_path: Path, absorbed: bool) -> Path:
    """A project with a committed submodule ``sub`` whose git dir is its own ``.git`` folder, or, once
    ``git submodule absorbgitdirs`` moved it, ``.git/modules/sub`` (``core.worktree`` pointing back)."""
    project, sub = tmp_path / "project", tmp_path / "project" / "sub"
    sub.mkdir(parents=True)
    make_repo(project)
    make_repo(sub)
    git(project, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub), "sub")  # kept in place
    git(project, "commit", "-q", "-m", "submodule")
    if absorbed:
        git(project, "submodule", "absorbgitdirs")
        assert (sub / ".git").is_file()
        assert git(sub, "config", "--get", "core.worktree").stdout.strip() == "../../../sub"
    return project


def _both_runners(project: Path) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """What the hook's status and the audit's reading say changed in ``project``."""
    return changed_paths(str(project)), [(c.status, c.path) for c in files_git.dirty_paths(project)]


@pytest.mark.slow
@pytest.mark.parametrize("absorbed", [True, False], ids=["absorbed", "own-git-dir"])
def test_a_change_inside_a_submodule_is_seen_whether_its_git_dir_is_absorbed_or_its_own(
    tmp_path: Path, absorbed: bool
) -> None:
    project = _with_submodule(tmp_path, absorbed)
    assert _both_runners(project) == ([], [])
    write(project, "sub/README.md", "changed inside the submodule\n")
    hook, audit = _both_runners(project)
    assert ("M", "sub") in hook
    assert ("M", "sub") in audit


@pytest.mark.slow
def test_a_core_worktree_that_names_the_submodule_s_own_folder_otherwise_still_sees_its_changes(
    tmp_path: Path,
) -> None:
    project = _with_submodule(tmp_path, absorbed=False)
    (tmp_path / "alias").symlink_to(project / "sub")
    git(project / "sub", "config", "core.worktree", str(tmp_path / "alias"))  # another spelling, the same folder
    write(project, "sub/README.md", "changed inside the submodule\n")
    hook, audit = _both_runners(project)
    assert ("M", "sub") in hook
    assert ("M", "sub") in audit


def _repointed(project: Path, decoy: Path, spelling: str) -> None:
    """The submodule's config pointing its work tree at ``decoy``, in one of the ways git reads it."""
    sub = project / "sub"
    git_dir = Path(git(sub, "rev-parse", "--absolute-git-dir").stdout.strip())
    if spelling == "absolute":
        git(sub, "config", "core.worktree", str(decoy))
    elif spelling == "relative":  # relative to the git dir, as git resolves it
        git(sub, "config", "core.worktree", os.path.relpath(decoy, git_dir))
    else:  # a header and its key on one line: read by git itself
        with (git_dir / "config").open("a") as config:
            config.write(f"[core] worktree = {decoy}\n")


@pytest.mark.slow
@pytest.mark.parametrize("spelling", ["absolute", "relative", "one-line"])
@pytest.mark.parametrize("absorbed", [True, False], ids=["absorbed", "own-git-dir"])
def test_a_submodule_whose_config_moves_its_work_tree_is_an_error_never_a_clean_tree(
    tmp_path: Path, absorbed: bool, spelling: str
) -> None:
    from handoff_core.errors import GitError
    from handoff_core.services.evidence.tree_status import StatusRefused

    project, decoy = _with_submodule(tmp_path, absorbed), tmp_path / "decoy"
    for name in ("src/a1/core.py", "src/b/other.py", "README.md", ".gitignore"):
        write(decoy, name, (project / "sub" / name).read_text())  # a clean copy of the submodule's files
    _repointed(project, decoy, spelling)
    write(project, "sub/README.md", "changed inside the submodule\n")
    assert "sub" not in git(project, "status", "--porcelain", "--ignore-submodules=none").stdout  # git is fooled
    with pytest.raises(StatusRefused):
        changed_paths(str(project))
    with pytest.raises(GitError) as refused:
        files_git.dirty_paths(project)
    assert refused.value.code == "git_error"


def _crlf(tree: Path, relative: str) -> None:
    (tree / relative).write_bytes((tree / relative).read_bytes().replace(b"\n", b"\r\n"))


def _utf_16(tree: Path, relative: str) -> None:
    (tree / relative).write_bytes((tree / relative).read_text().encode("utf-16"))


@pytest.mark.slow
@pytest.mark.parametrize(("rule", "rewrite"), [("eol=crlf", _crlf), ("working-tree-encoding=UTF-16", _utf_16)])
def test_a_rule_in_info_attributes_is_refused_as_the_audit_refuses_it(
    tmp_path: Path, rule: str, rewrite: Callable[[Path, str], None]
) -> None:
    from handoff_core.errors import GitError
    from handoff_core.services.evidence.tree_status import StatusRefused

    make_repo(tmp_path)
    (tmp_path / ".git/info").mkdir(exist_ok=True)
    (tmp_path / ".git/info/attributes").write_text(f"# the executor's\nsrc/b/other.py {rule}\n")
    rewrite(tmp_path, "src/b/other.py")
    git(tmp_path, "add", "src/b/other.py")  # the index learns the rewrite's stat data; its blob is the committed one
    assert git(tmp_path, "status", "--porcelain").stdout == ""  # git reads the rewrite as the committed file
    with pytest.raises(StatusRefused, match="info/attributes"):
        changed_paths(str(tmp_path))
    with pytest.raises(GitError, match="info/attributes"):
        files_git.dirty_paths(tmp_path)


@pytest.mark.slow
def test_an_info_attributes_of_comments_only_leaves_the_hook_s_answer_as_it_was(tmp_path: Path) -> None:
    make_repo(tmp_path)
    (tmp_path / ".git/info").mkdir(exist_ok=True)
    (tmp_path / ".git/info/attributes").write_text("# git init writes this file's comments\n\n")
    write(tmp_path, "src/b/other.py", "changed\n")
    assert changed_paths(str(tmp_path)) == [("M", "src/b/other.py")]


@pytest.mark.slow
def test_a_gitattributes_file_the_executor_adds_to_hide_a_rewrite_is_itself_a_change(tmp_path: Path) -> None:
    make_repo(tmp_path)
    write(tmp_path, ".gitattributes", "src/b/other.py eol=crlf\n")
    _crlf(tmp_path, "src/b/other.py")
    git(tmp_path, "add", "src/b/other.py")
    changed = changed_paths(str(tmp_path))
    assert ("M", "src/b/other.py") not in changed  # the rule hides the rewrite, as it does from git
    assert changed == [("?", ".gitattributes")]  # but the rule is a new file in the tree: judged by the scope
    git(tmp_path, "add", ".gitattributes")
    assert changed_paths(str(tmp_path)) == [("A", ".gitattributes")]  # staged, it is still a change


@pytest.mark.slow
@pytest.mark.parametrize("flag", ["--assume-unchanged", "--skip-worktree"])
@pytest.mark.parametrize("absorbed", [True, False], ids=["absorbed", "own-git-dir"])
def test_the_audit_reads_a_submodule_past_the_flags_of_its_own_index(tmp_path: Path, absorbed: bool, flag: str) -> None:
    project = _with_submodule(tmp_path, absorbed)
    write(project, "sub/README.md", "changed inside the submodule\n")
    git(project / "sub", "update-index", flag, "README.md")
    assert git(project, "status", "--porcelain", "--ignore-submodules=none").stdout == ""  # git is fooled
    assert [(c.status, c.path) for c in files_git.dirty_paths(project)] == [("M", "sub")]


@pytest.mark.slow
def test_the_audit_refuses_a_rule_in_a_submodule_s_info_attributes(tmp_path: Path) -> None:
    from handoff_core.errors import GitError

    project = _with_submodule(tmp_path, absorbed=True)
    info = project / ".git/modules/sub/info"
    info.mkdir(exist_ok=True)
    (info / "attributes").write_text("README.md eol=crlf\n")
    _crlf(project / "sub", "README.md")
    git(project / "sub", "add", "README.md")  # the submodule's index: the committed blob, the rewrite's stat
    assert git(project, "status", "--porcelain", "--ignore-submodules=none").stdout == ""  # git is fooled
    with pytest.raises(GitError, match="info/attributes") as refused:
        files_git.dirty_paths(project)
    assert refused.value.code == "git_error"


@pytest.mark.slow
def test_the_audit_sees_a_change_in_a_nested_submodule_whose_gitmodules_entry_ignores_it(tmp_path: Path) -> None:
    inner, middle, project = tmp_path / "inner", tmp_path / "middle", tmp_path / "project"
    for path in (inner, middle, project):
        path.mkdir()
        make_repo(path)
    git(middle, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(inner), "inner")
    git(middle, "config", "-f", ".gitmodules", "submodule.inner.ignore", "all")  # committed: no change to see
    git(middle, "add", ".gitmodules")
    git(middle, "commit", "-q", "-m", "inner, ignored")
    git(project, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(middle), "middle")
    git(project, "-c", "protocol.file.allow=always", "submodule", "update", "-q", "--init", "--recursive")
    git(project, "commit", "-q", "-m", "middle")
    write(project, "middle/inner/README.md", "changed two levels down\n")
    assert git(project, "status", "--porcelain", "--ignore-submodules=none").stdout == ""  # git is fooled
    assert [(c.status, c.path) for c in files_git.dirty_paths(project)] == [("M", "middle")]

"""audit_task against what an executor can plant in its own repository (config, includes, attributes,
index flags and stat data, ``core.worktree``): the audit still names the out-of-scope change, and no
command the repository names runs. Real git, real linked worktrees."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from bench.requests import implementation
from handoff_core.contract.ids import Ref
from handoff_core.contract.scope import Scope
from handoff_core.services.evidence.audit import audit_task
from handoff_core.services.writing.store import Store
from tests.support.gitrepo import add_worktree, commit_all, git, make_repo, report, write

OUT_OF_SCOPE = "src/b/other.py"
OLD = 1_600_000_000  # a file time long before any index these tests write


@pytest.fixture
def worktree(project: Path) -> Path:
    make_repo(project)
    return add_worktree(project, "task-a")


def returned_in_scope(store: Store, tree: Path) -> Ref:
    """A task that committed in-scope work as its checkpoint and returned: its audit passes as it is."""
    scope = Scope(workspace="required", writable=("src/a1/**",), worktree=str(tree), branch="task-a")
    ref = store.create_task(implementation(scope=scope)).ref
    write(tree, "src/a1/new.py")
    store.write_report(report(ref.session, ref.task, commit_all(tree)), ref.change)
    assert audit_task(store.queries, ref).verdict == "passed"
    return ref


def script(path: Path, body: str) -> Path:
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


def lying_fsmonitor(tmp_path: Path) -> tuple[Path, Path]:
    """An fsmonitor hook (protocol 2) that records each run and answers "nothing changed since then"."""
    marker = tmp_path / "fsmonitor-ran"
    hook = script(tmp_path / "fsmonitor", f"touch '{marker}'\nprintf 'token\\0'")
    return hook, marker


def hidden_by_status(tree: Path) -> bool:
    """Whether the executor's own ``git status`` no longer sees the out-of-scope change: the plant works."""
    return OUT_OF_SCOPE not in git(tree, "status", "--porcelain", "--untracked-files=all").stdout


def same_size_edit(tree: Path) -> None:
    """An edit git's stat check cannot see by itself: the same size ("x\\n" to "y\\n") and the same mtime,
    an old one (a file not newer than the index is not "racily clean": git does not read it again)."""
    path = tree / OUT_OF_SCOPE
    path.write_text("y\n")
    os.utime(path, (OLD, OLD))


def aged(tree: Path) -> None:
    os.utime(tree / OUT_OF_SCOPE, (OLD, OLD))


def plant_fsmonitor(tree: Path, tmp_path: Path, config: Path) -> Path:
    hook, marker = lying_fsmonitor(tmp_path)
    git(tree, "config", "--file", str(config), "core.fsmonitor", str(hook))
    git(tree, "status", "--porcelain")  # the index learns the hook's token, every entry marked valid
    write(tree, OUT_OF_SCOPE, "changed by the executor\n")
    assert hidden_by_status(tree)
    marker.unlink()
    return marker


def common_dir(tree: Path) -> Path:
    return Path(git(tree, "rev-parse", "--path-format=absolute", "--git-common-dir").stdout.strip())


def test_a_lying_fsmonitor_hook_in_the_config_never_runs_and_hides_nothing(
    store: Store, worktree: Path, tmp_path: Path
) -> None:
    ref = returned_in_scope(store, worktree)
    marker = plant_fsmonitor(worktree, tmp_path, common_dir(worktree) / "config")
    audit = audit_task(store.queries, ref)
    assert audit.verdict == "failed"
    assert OUT_OF_SCOPE in [v.path for v in audit.violations]
    assert not marker.exists()


def test_an_included_config_file_naming_an_fsmonitor_hook_is_overruled_too(
    store: Store, worktree: Path, tmp_path: Path
) -> None:
    ref = returned_in_scope(store, worktree)
    planted = tmp_path / "planted.cfg"
    git(worktree, "config", "include.path", str(planted))
    marker = plant_fsmonitor(worktree, tmp_path, planted)
    audit = audit_task(store.queries, ref)
    assert OUT_OF_SCOPE in [v.path for v in audit.violations]
    assert not marker.exists()


def test_a_clean_filter_named_by_the_attributes_never_runs_and_hides_nothing(
    store: Store, worktree: Path, tmp_path: Path
) -> None:
    write(worktree, "src/a1/.gitattributes", "core.py filter=pristine\n")  # tracked, in scope, in the checkpoint
    ref = returned_in_scope(store, worktree)
    marker = tmp_path / "filter-ran"
    git(worktree, "config", "filter.pristine.clean", f"touch '{marker}'; printf 'x\\n'")
    git(worktree, "config", "filter.pristine.required", "true")
    edited = worktree / "src/a1/core.py"
    os.utime(edited, (OLD, OLD))
    git(worktree, "status", "--porcelain")
    edited.write_text("y\n")  # the same size, the same old mtime: git hashes it through the filter, if at all
    os.utime(edited, (OLD, OLD))
    assert "src/a1/core.py" not in git(worktree, "status", "--porcelain").stdout
    marker.unlink(missing_ok=True)
    audit = audit_task(store.queries, ref)
    assert audit.verdict == "failed"
    assert "M src/a1/core.py" in audit.dirty
    assert not marker.exists()


def utf_16(tree: Path) -> None:
    (tree / OUT_OF_SCOPE).write_bytes((tree / OUT_OF_SCOPE).read_text().encode("utf-16"))


def crlf(tree: Path) -> None:
    (tree / OUT_OF_SCOPE).write_bytes((tree / OUT_OF_SCOPE).read_bytes().replace(b"\n", b"\r\n"))


@pytest.mark.parametrize(
    ("attribute", "rewrite"), [("working-tree-encoding=UTF-16", utf_16), ("eol=crlf", crlf)], ids=["utf-16", "crlf"]
)
def test_a_rewrite_that_attributes_in_info_attributes_read_as_unchanged_never_passes(
    store: Store, worktree: Path, attribute: str, rewrite: Callable[[Path], None]
) -> None:
    ref = returned_in_scope(store, worktree)
    info = common_dir(worktree) / "info"
    info.mkdir(exist_ok=True)
    (info / "attributes").write_text(f"# the executor's\n{OUT_OF_SCOPE} {attribute}\n")  # in no diff
    rewrite(worktree)  # a file the out-of-scope path's readers no longer read as before
    audit = audit_task(store.queries, ref)
    assert audit.verdict == "unknown"
    assert "info/attributes" in audit.reason


def test_an_info_attributes_of_comments_only_is_no_reason_to_refuse(store: Store, worktree: Path) -> None:
    ref = returned_in_scope(store, worktree)
    info = common_dir(worktree) / "info"
    info.mkdir(exist_ok=True)
    (info / "attributes").write_text("# git init writes this file's comments\n\n")
    assert audit_task(store.queries, ref).verdict == "passed"


def assume_unchanged(tree: Path) -> None:
    git(tree, "update-index", "--assume-unchanged", OUT_OF_SCOPE)
    write(tree, OUT_OF_SCOPE, "changed by the executor\n")


def skip_worktree(tree: Path) -> None:
    git(tree, "update-index", "--skip-worktree", OUT_OF_SCOPE)
    write(tree, OUT_OF_SCOPE, "changed by the executor\n")


def forged_stat(tree: Path) -> None:
    """Stat data that matches the edited file: the same size and mtime, ctime and inode not compared."""
    git(tree, "config", "core.trustctime", "false")
    git(tree, "config", "core.checkStat", "minimal")
    aged(tree)
    git(tree, "status", "--porcelain")  # the index holds the file's stat data, older than the index
    same_size_edit(tree)


def excluded_locally(tree: Path) -> None:
    (common_dir(tree) / "info").mkdir(exist_ok=True)
    (common_dir(tree) / "info" / "exclude").write_text("src/b/\n")  # untracked, never diffed
    write(tree, "src/b/planted.py", "an untracked file out of scope\n")


@pytest.mark.parametrize(
    "plant", [assume_unchanged, skip_worktree, forged_stat, excluded_locally], ids=lambda p: p.__name__
)
def test_index_flags_forged_stat_data_and_local_excludes_hide_no_change(
    store: Store, worktree: Path, plant: Callable[[Path], None]
) -> None:
    ref = returned_in_scope(store, worktree)
    plant(worktree)
    assert hidden_by_status(worktree) if plant is not excluded_locally else True
    audit = audit_task(store.queries, ref)
    assert audit.verdict == "failed"
    assert any(v.path.startswith("src/b/") for v in audit.violations), audit


def test_a_planted_core_worktree_does_not_redirect_the_audit(store: Store, worktree: Path, tmp_path: Path) -> None:
    ref = returned_in_scope(store, worktree)
    pristine = tmp_path / "pristine"
    shutil.copytree(worktree, pristine)
    (pristine / ".git").unlink()  # a plain copy of the checkpoint's files
    write(worktree, OUT_OF_SCOPE, "changed by the executor\n")
    git(worktree, "config", "extensions.worktreeConfig", "true")  # a linked worktree reads its own core.worktree
    git(worktree, "config", "--worktree", "core.worktree", str(pristine))
    assert hidden_by_status(worktree)
    audit = audit_task(store.queries, ref)
    assert audit.verdict == "failed"
    assert OUT_OF_SCOPE in [v.path for v in audit.violations]


def test_a_clean_filter_a_submodule_s_own_config_names_never_runs_and_hides_nothing(
    store: Store, worktree: Path, tmp_path: Path
) -> None:
    inner = worktree / "src/a1/inner"  # a repository of the executor's, committed in scope as a gitlink
    inner.mkdir(parents=True)
    make_repo(inner)
    write(inner, ".gitattributes", "README.md filter=pristine\n")
    commit_all(inner, "attributes")
    ref = returned_in_scope(store, worktree)
    marker = tmp_path / "filter-ran"
    git(inner, "config", "filter.pristine.clean", f"touch '{marker}'; printf 'x\\n'")
    (inner / "README.md").write_text("y\n")  # the committed size: git hashes it through the filter
    audit = audit_task(store.queries, ref)
    assert not marker.exists()
    assert audit.verdict == "failed"

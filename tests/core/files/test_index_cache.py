"""The index a work tree's read keeps between reads: trusted only when it verifies, and never at the
cost of a change it would hide."""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import subprocess
import time
from pathlib import Path

import pytest

from handoff_core.files import git, index_cache
from tests.support.gitrepo import ENV, make_repo, write
from tests.support.gitrepo import git as plain_git


def _changes(tree: Path) -> list[tuple[str, str]]:
    return [(c.status, c.path) for c in git.dirty_paths(tree)]


def _settled(tree: Path) -> None:
    """``tree`` as a repository whose files were last written ten seconds ago: no index written now
    takes them for racily clean (changed in the tick it was written), so git trusts their stat data."""
    make_repo(tree)
    for path in tree.rglob("*"):
        if path.is_file() and ".git" not in path.parts:
            then = path.stat().st_mtime_ns - 10**10
            os.utime(path, ns=(then, then))


def _next_second() -> None:
    """Past the second the files' ctimes lie in: an index read now records them as settled and is kept.
    A bounded wait on the clock (at most a second and ``CLOCK_LAG``), not a guess at how long git takes."""
    past = int(time.time()) + 1 + index_cache.CLOCK_LAG
    while time.time() < past:
        time.sleep(0.01)


def _same_stat_rewrite(path: Path, text: str) -> None:
    """``text`` written over ``path`` with its size and modification time as they were: only its
    ctime (which no one but the kernel sets) says it changed."""
    before = path.stat()
    assert len(text.encode()) == before.st_size
    path.write_text(text)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def _forged_index(tree: Path, relative: str, scratch: Path) -> bytes:
    """An index of ``HEAD`` whose entry for the rewritten ``relative`` holds HEAD's blob with the file's
    stat data now: read as stat-valid, it says the file is unchanged."""
    env = {**ENV, "GIT_INDEX_FILE": str(scratch)}
    head_blob = plain_git(tree, "rev-parse", f"HEAD:{relative}").stdout.strip()
    now_blob = plain_git(tree, "hash-object", relative).stdout.strip()
    for args in (("read-tree", "HEAD"), ("update-index", "--add", relative), ("update-index", "-q", "--refresh")):
        _run(tree, env, *args)
    data = scratch.read_bytes().replace(bytes.fromhex(now_blob), bytes.fromhex(head_blob))
    forged = data[:-20] + hashlib.sha1(data[:-20]).digest()
    scratch.write_bytes(forged)
    assert _run(tree, env, "diff-files", "--name-only") == ""  # git itself would take the file as unchanged
    return forged


def _run(tree: Path, env: dict[str, str], *args: str) -> str:
    return subprocess.run(["git", *args], cwd=tree, env=env, capture_output=True, text=True, check=True).stdout


def test_a_file_rewritten_after_a_kept_read_is_still_seen(tmp_path: Path) -> None:
    _settled(tmp_path)
    _next_second()
    assert _changes(tmp_path) == []
    assert os.path.exists(index_cache.held_at(tmp_path))  # the read kept its index
    _same_stat_rewrite(tmp_path / "src/a1/core.py", "y\n")
    assert _changes(tmp_path) == [("M", "src/a1/core.py")]


def test_a_kept_index_another_process_signed_is_never_trusted(tmp_path: Path) -> None:
    _settled(tmp_path)
    _next_second()
    assert _changes(tmp_path) == []
    _same_stat_rewrite(tmp_path / "src/a1/core.py", "y\n")
    forged = _forged_index(tmp_path, "src/a1/core.py", tmp_path.parent / "scratch-index")
    head = plain_git(tmp_path, "rev-parse", "HEAD").stdout.strip()
    held = index_cache.held_at(tmp_path)
    mtime_ns = (tmp_path.parent / "scratch-index").stat().st_mtime_ns
    said = b"\0".join((os.fsencode(os.path.realpath(tmp_path)), head.encode(), str(mtime_ns).encode(), forged))
    other_key = hmac.new(secrets.token_bytes(32), said, hashlib.sha256).hexdigest()  # another process's key
    os.makedirs(os.path.dirname(held), exist_ok=True)
    Path(held).write_bytes(f"{head} {mtime_ns} {other_key}\n".encode() + forged)
    assert _changes(tmp_path) == [("M", "src/a1/core.py")]


def test_a_kept_index_edited_after_it_was_kept_is_read_again_from_head(tmp_path: Path) -> None:
    _settled(tmp_path)
    _next_second()
    assert _changes(tmp_path) == []
    _same_stat_rewrite(tmp_path / "src/a1/core.py", "y\n")
    forged = _forged_index(tmp_path, "src/a1/core.py", tmp_path.parent / "scratch-index")
    held = Path(index_cache.held_at(tmp_path))
    record = held.read_bytes().partition(b"\n")[0]
    held.write_bytes(record + b"\n" + forged)  # its record still names the bytes kept
    assert _changes(tmp_path) == [("M", "src/a1/core.py")]


@pytest.mark.parametrize("moved", [False, True])
def test_reads_with_a_kept_index_say_what_reads_without_one_say(
    tmp_path: Path, moved: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Across edits, a commit that moves HEAD (the kept index merged onto it) and a file put back."""
    project, cold = tmp_path / "p", tmp_path / "cold-cache"
    project.mkdir()
    make_repo(project)

    def both() -> list[tuple[str, str]]:
        warm = _changes(project)
        with monkeypatch.context() as patched:
            patched.setenv("HANDOFF_CACHE_DIR", str(cold / secrets.token_hex(4)))  # an empty cache: read from HEAD
            assert _changes(project) == warm
        return warm

    assert both() == []
    write(project, "src/a1/core.py", "changed\n")
    write(project, "src/a1/new.py")
    assert both() == [("M", "src/a1/core.py"), ("?", "src/a1/new.py")]
    if moved:
        plain_git(project, "add", "-A")
        plain_git(project, "commit", "-q", "-m", "more")
        assert both() == []
        write(project, "README.md", "z\n")
        assert both() == [("M", "README.md")]
    else:
        write(project, "src/a1/core.py", "x\n")  # put back as it is in HEAD
        assert both() == [("?", "src/a1/new.py")]


def test_a_file_rewritten_in_the_second_its_read_began_is_still_seen(tmp_path: Path) -> None:
    """Git compares stat times in whole seconds: an entry whose ctime lies in the second the read began
    could match a rewrite later that second, so no index holding one is kept."""
    _settled(tmp_path)  # every ctime now: the read below begins in the same second, or just after it
    assert _changes(tmp_path) == []
    _same_stat_rewrite(tmp_path / "src/a1/core.py", "y\n")
    assert _changes(tmp_path) == [("M", "src/a1/core.py")]


def _edited(tree: Path, edit: str) -> None:
    """One kind of change to the settled repository ``tree`` (or none)."""
    core = tree / "src/a1/core.py"
    if edit == "changed":
        write(tree, "src/a1/core.py", "changed\n")
    elif edit == "same bytes rewritten":
        core.write_text(core.read_text())  # new stat data, same content: nothing differs
    elif edit == "deleted":
        core.unlink()
    elif edit == "made executable":
        core.chmod(0o755)
    elif edit == "a folder now":
        core.unlink()
        write(tree, "src/a1/core.py/inner.py")
    elif edit == "staged":
        write(tree, "src/a1/core.py", "staged\n")
        plain_git(tree, "add", "src/a1/core.py")
    elif edit == "untracked and ignored":
        write(tree, "src/a1/new.py")
        write(tree, ".gitignore", "speculo/\n*.log\n")
        write(tree, "src/a1/noise.log")


@pytest.mark.parametrize(
    "edit",
    ["none", "changed", "same bytes rewritten", "deleted", "made executable", "a folder now", "staged",
     "untracked and ignored"],
)  # fmt: skip
def test_a_read_whose_listing_finds_nothing_tracked_changed_says_what_a_full_read_says(
    tmp_path: Path, edit: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a kept index one tagged ``ls-files`` stands in for ``git diff`` when no tracked file differs;
    its answer is the answer of a read from ``HEAD`` with no kept index, whatever the tree holds."""
    _settled(tmp_path)
    _next_second()
    assert _changes(tmp_path) == []  # kept: the read below starts from it
    _edited(tmp_path, edit)
    warm = _changes(tmp_path)
    monkeypatch.setenv("HANDOFF_CACHE_DIR", str(tmp_path.parent / "cold-cache"))  # no kept index: read from HEAD
    assert _changes(tmp_path) == warm
    assert (warm == []) == (edit in ("none", "same bytes rewritten"))

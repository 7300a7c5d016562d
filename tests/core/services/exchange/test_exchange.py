"""The external-web exchange on real trees: sealed outbound packages, untrusted returns."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
import zipfile
from pathlib import Path

import pytest

from bench.requests import review
from handoff_core.contract.exchange import Channel
from handoff_core.contract.return_policy import ReturnPolicy
from handoff_core.contract.task import Task
from handoff_core.errors import InvalidContent, InvalidIdentifier, WriteConflict
from handoff_core.services.exchange.outbound import external_dispatches, package_dispatch
from handoff_core.services.exchange.returns import receive_return
from handoff_core.services.writing.store import Store
from tests.support.archives import HOSTILE, zip_of
from tests.support.exchange import NOW
from tests.support.gitrepo import git, make_repo, write
from tests.support.hung_git import alive, hang_git

GHP = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


@pytest.fixture
def task(store: Store) -> Task:
    return store.queries.read_task(store.create_task(review()).ref)[0]


def messy(project: Path) -> None:
    (project / "src" / "a1").mkdir(parents=True)
    (project / "src" / "a1" / "core.py").write_text("def f():\n    return 1\n")
    (project / "src" / "a1" / ".env").write_text("API_KEY=abc\n")
    (project / "src" / "a1" / "id_rsa").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nxx\n")
    (project / "src" / "node_modules" / "left-pad").mkdir(parents=True)
    (project / "src" / "node_modules" / "left-pad" / "index.js").write_text("module.exports = 1\n")
    (project / "src" / ".git").mkdir()
    (project / "src" / ".git" / "config").write_text("[core]\n")
    with open(project / "src" / "a1" / "model.weights", "wb") as handle:
        handle.truncate(50 * 1024 * 1024)


def test_a_package_leaves_out_secrets_caches_vcs_and_large_binaries(project: Path, task: Task) -> None:
    messy(project)
    sealed = package_dispatch(project, task, "scope-1", "d1", ["src"], Channel(), NOW)
    assert sealed.included == ("src/a1/core.py",)
    reasons = {item["path"]: item["reason"] for item in sealed.excluded}
    assert reasons["src/a1/.env"] == "secrets file"
    assert reasons["src/a1/id_rsa"] == "key"
    assert reasons["src/node_modules"] == "dependency cache"
    assert reasons["src/.git"] == "version control internals"
    assert reasons["src/a1/model.weights"] == "large or binary file"
    root = project / "temp" / "task-delivery" / "scope-1" / task.task / "d1"
    manifest = json.loads((root / "outbound" / "staging" / "MANIFEST.json").read_text())
    assert manifest["included"] == ["src/a1/core.py"]
    assert {item["path"] for item in manifest["excluded"]} == set(reasons)
    assert manifest["secret_scan"]["result"] == "pass"
    archive = (root / "outbound" / "d1.outbound.zip").read_bytes()
    assert hashlib.sha256(archive).hexdigest() == sealed.sha256
    assert (root / "outbound" / "d1.outbound.sha256").read_text() == f"{sealed.sha256}  d1.outbound.zip\n"
    assert sealed.sha256 in (root / "SESSION.md").read_text()


def test_a_secret_in_an_included_file_leaves_it_out_naming_the_line(project: Path, task: Task) -> None:
    (project / "src").mkdir()
    (project / "src" / "settings.py").write_text(f"DEBUG = True\nTOKEN = '{GHP}'\n")
    (project / "src" / "app.py").write_text("x = 1\n")
    sealed = package_dispatch(project, task, "scope-1", "d1", ["src"], Channel(), NOW)
    assert sealed.included == ("src/app.py",)
    reasons = {item["path"]: item["reason"] for item in sealed.excluded}
    assert "GitHub Token on line 2" in reasons["src/settings.py"]


def test_a_secret_in_the_task_text_blocks_the_package(project: Path, task: Task) -> None:
    with pytest.raises(InvalidContent) as caught:
        package_dispatch(project, task._replace(goal=f"Use {GHP} to log in."), "scope-1", "d1", [], Channel(), NOW)
    assert "DISPATCH.md line" in caught.value.message
    assert not (project / "temp").exists()


def test_the_same_inputs_seal_the_same_bytes(tmp_path: Path, project: Path, task: Task) -> None:
    (project / "src").mkdir()
    (project / "src" / "a.py").write_text("x = 1\n")
    twin = tmp_path / "twin" / "project"
    shutil.copytree(project, twin)
    first = package_dispatch(project, task, "scope-1", "d1", ["src"], Channel(), NOW)
    second = package_dispatch(twin, task, "scope-1", "d1", ["src"], Channel(), NOW)
    assert first.sha256 == second.sha256


def test_an_existing_dispatch_is_never_overwritten(project: Path, task: Task) -> None:
    package_dispatch(project, task, "scope-1", "d1", [], Channel(), NOW)
    with pytest.raises(WriteConflict) as caught:
        package_dispatch(project, task, "scope-1", "d1", [], Channel(), NOW)
    assert "new dispatch id" in caught.value.message


@pytest.mark.parametrize("bad", ["../x", "a/b", "", "..", "é", "x" * 81])
def test_ids_outside_the_safe_alphabet_are_refused(project: Path, task: Task, bad: str) -> None:
    with pytest.raises(InvalidIdentifier):
        package_dispatch(project, task, bad, "d1", [], Channel(), NOW)


def sealed_dispatch(project: Path, task: Task) -> Path:
    package_dispatch(project, task, "scope-1", "d1", [], Channel(), NOW)
    return project / "temp" / "task-delivery" / "scope-1" / task.task / "d1"


@pytest.mark.parametrize(
    "kind", sorted(k for k in HOSTILE if k not in ("too many entries", "entry too large", "total too large"))
)
def test_a_hostile_return_leaves_nothing_in_the_project(project: Path, task: Task, kind: str) -> None:
    root = sealed_dispatch(project, task)
    with pytest.raises(InvalidContent):
        receive_return(project, "scope-1", task.task, "d1", "a1", HOSTILE[kind][0], is_text=False)
    assert not (root / "inbound").exists()


def test_a_benign_return_is_kept_sealed_and_nothing_of_it_is_extracted_until_accepted(
    project: Path, task: Task
) -> None:
    root = sealed_dispatch(project, task)
    files = {"RETURN.md": b"# Return\ndispatch_id: d1\n", "FINDINGS.md": b"- none blocking\n"}
    data = zip_of(*files.items())
    got = receive_return(project, "scope-1", task.task, "d1", "a1", data, is_text=False)
    attempt = root / "inbound" / "a1"
    assert sorted(p.relative_to(attempt).as_posix() for p in attempt.rglob("*")) == [
        "ACCEPTANCE.md", "d1.return.a1.sha256", "d1.return.a1.zip", "raw", "raw/response.zip",
    ]  # fmt: skip
    assert (attempt / "d1.return.a1.zip").read_bytes() == (attempt / "raw" / "response.zip").read_bytes() == data
    assert (attempt / "d1.return.a1.sha256").read_text().startswith(hashlib.sha256(data).hexdigest())
    assert "Verdict: pending" in (attempt / "ACCEPTANCE.md").read_text()
    assert (got.extracted_files, got.kept) == (0, ("RETURN.md", "FINDINGS.md"))
    with pytest.raises(WriteConflict):
        receive_return(project, "scope-1", task.task, "d1", "a1", data, is_text=False)
    taken = receive_return(project, "scope-1", task.task, "d1", "a2", data, is_text=False, accept=["FINDINGS.md"])
    assert (taken.extracted_files, taken.kept) == (1, ("RETURN.md",))
    assert [p.name for p in (root / "inbound" / "a2" / "extracted").iterdir()] == ["FINDINGS.md"]
    assert (root / "inbound" / "a2" / "extracted" / "FINDINGS.md").read_bytes() == files["FINDINGS.md"]


def test_a_folder_accepted_takes_the_files_below_it_but_never_a_held_one(project: Path, task: Task) -> None:
    root = sealed_dispatch(project, task)
    data = zip_of(
        ("RETURN.md", b"# Return\n"),
        ("candidate/src/a.py", b"x = 1\n"),
        ("candidate/tests/test_a.py", b"def test_a():\n    pass\n"),
        ("candidate/conftest.py", b"import os\n"),
    )
    got = receive_return(project, "scope-1", task.task, "d1", "a1", data, is_text=False, accept=["candidate/"])
    extracted = root / "inbound" / "a1" / "extracted"
    assert sorted(p.relative_to(extracted).as_posix() for p in extracted.rglob("*.py")) == [
        "candidate/src/a.py",
        "candidate/tests/test_a.py",
    ]
    assert [name for name, _ in got.held] == ["candidate/conftest.py"]
    assert got.kept == ("RETURN.md", "candidate/conftest.py")
    for wrong in (["candidate"], ["cand/"], ["RETURN"]):
        with pytest.raises(InvalidContent) as caught:
            receive_return(project, "scope-1", task.task, "d1", "a2", data, is_text=False, accept=wrong)
        assert "takes no file of this return" in caught.value.message
    assert not (root / "inbound" / "a2").exists()


def test_a_text_return_is_kept_raw_and_as_a_lead_capture_only_inside_zips(project: Path, task: Task) -> None:
    root = sealed_dispatch(project, task)
    text = "Findings:\n1. The parser ignores ``` fences.\n>>> import os\n"
    got = receive_return(project, "scope-1", task.task, "d1", "t1", text.encode(), is_text=True)
    attempt = root / "inbound" / "t1"
    assert sorted(p.name for p in attempt.rglob("*") if p.is_file()) == [
        "ACCEPTANCE.md", "d1.return.t1.sha256", "d1.return.t1.zip", "response.txt.zip",
    ]  # fmt: skip
    with zipfile.ZipFile(attempt / "raw" / "response.txt.zip") as raw:
        assert raw.read("response.txt") == text.encode()
    assert got.raw_sha256 == hashlib.sha256(text.encode()).hexdigest()
    with zipfile.ZipFile(attempt / "d1.return.t1.zip") as sealed:
        staged = sealed.read("RETURN.md").decode()
    assert "captured_by_lead" in staged
    assert text in staged


def test_status_lists_external_dispatches_and_their_attempts(project: Path, task: Task) -> None:
    sealed_dispatch(project, task)
    receive_return(project, "scope-1", task.task, "d1", "t1", b"answer", is_text=True)
    assert external_dispatches(project) == [f"temp/task-delivery/scope-1/{task.task}/d1: sealed; return attempts: t1"]


def test_status_lists_the_most_recently_sealed_dispatches_and_counts_the_rest(project: Path, task: Task) -> None:
    for number in range(4):
        package_dispatch(project, task, "scope-1", f"d{number}", [], Channel(), NOW)
        session = project / "temp" / "task-delivery" / "scope-1" / task.task / f"d{number}" / "SESSION.md"
        os.utime(session, ns=(number * 10**9, number * 10**9))  # sealed in order d0, d1, d2, d3
    lines = external_dispatches(project, shown=2)
    assert [line.split(":")[0].rsplit("/", 1)[1] for line in lines[:2]] == ["d3", "d2"]
    assert lines[2] == "and 2 older under temp/task-delivery/ (not listed)"


def test_a_package_sealed_before_policies_were_recorded_is_judged_by_its_kind(project: Path, task: Task) -> None:
    root = sealed_dispatch(project, task)
    manifest_path = root / "outbound" / "staging" / "MANIFEST.json"
    manifest = json.loads(manifest_path.read_text())
    del manifest["return_limits"]
    manifest_path.unlink()
    manifest_path.write_text(json.dumps(manifest))
    many = zip_of(*((f"notes/{index}.md", b"x\n") for index in range(ReturnPolicy().entries + 1)))
    with pytest.raises(InvalidContent) as caught:
        receive_return(project, "scope-1", task.task, "d1", "a1", many, is_text=False)
    assert "entry limit" in caught.value.message
    got = receive_return(project, "scope-1", task.task, "d1", "a1", zip_of(("RETURN.md", b"# R\n")), is_text=False)
    assert got.kept == ("RETURN.md",)


def test_a_git_that_hangs_while_packaging_is_stopped_with_all_it_started(
    project: Path, task: Task, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started = hang_git(tmp_path, monkeypatch, "rev-parse")
    (project / "docs").mkdir(exist_ok=True)
    (project / "docs" / "note.md").write_text("a note\n")
    began = time.monotonic()
    package_dispatch(project, task, "scope-1", "d1", ["docs"], Channel(), NOW)
    assert time.monotonic() - began < 8  # the runner's bound (1 s here), not a fixed ten seconds
    manifest = project / "temp" / "task-delivery" / "scope-1" / task.task / "d1" / "outbound" / "staging"
    assert json.loads((manifest / "MANIFEST.json").read_text())["base_checkpoint"] == "unknown"
    assert alive(started) == []


@pytest.mark.slow
def test_a_filter_a_submodule_s_config_names_never_runs_when_a_package_reads_the_work_tree(
    project: Path, task: Task, tmp_path: Path
) -> None:
    sub, mark = tmp_path / "sub", tmp_path / "ran"
    sub.mkdir()
    make_repo(sub)
    write(sub, ".gitattributes", "README.md filter=hide\n")
    git(sub, "add", "-A")
    git(sub, "commit", "-q", "-m", "attributes")
    make_repo(project)
    git(project, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub), "sub")
    git(project, "commit", "-q", "-m", "submodule")
    git(project / "sub", "config", "filter.hide.clean", f"touch {mark}; printf 'x\\n'")
    write(project, "sub/README.md", "y\n")  # the committed size: git hashes it (through the filter) to compare
    package_dispatch(project, task, "scope-1", "d1", [], Channel(), NOW)
    root = project / "temp" / "task-delivery" / "scope-1" / task.task / "d1"
    manifest = json.loads((root / "outbound" / "staging" / "MANIFEST.json").read_text())
    assert not mark.exists()
    assert manifest["workspace_state"] == "snapshot"

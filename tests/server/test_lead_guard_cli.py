"""``handoff-mcp guard --lead`` and the main tree's pre-commit hook, as real processes in a real repository."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.requests import implementation
from handoff_core.contract.ids import Ref
from handoff_core.services.capabilities.tokens import token_check
from handoff_core.services.writing.store import Store
from tests.support.gitrepo import ENV, git, make_repo
from tests.support.guard_calls import commit, event, guard

pytestmark = pytest.mark.slow


TOKEN = "the-holders-report-token-0123456789"


@pytest.fixture
def held(store: Store, project: Path) -> Ref:
    make_repo(project)
    request = replace(implementation(), token_check=lambda ref: token_check(TOKEN))  # as the Lead's server records it
    return store.create_task(request).ref  # current, src/a1/**


def test_the_leads_hook_denies_a_held_path_in_the_documented_form(project: Path, held: Ref) -> None:
    denied = guard(project, "--lead", stdin=event(project / "src/a1/core.py", project))
    assert denied.returncode == 0
    output = json.loads(denied.stdout)["hookSpecificOutput"]
    assert output["permissionDecision"] == "deny"
    assert str(held) in output["permissionDecisionReason"]
    allowed = guard(project, "--lead", stdin=event(project / "src/b/other.py", project))
    assert (allowed.returncode, allowed.stdout) == (0, "")


def test_the_main_tree_hook_refuses_staging_a_path_an_executor_holds(project: Path, held: Ref) -> None:
    assert guard(project, "--install-git-hook", cwd=project).returncode == 0
    refused = commit(project, "src/a1/core.py")
    assert refused.returncode != 0
    assert "src/a1/core.py" in refused.stderr
    assert str(held) in refused.stderr
    git(project, "reset", "-q")
    assert commit(project, "src/b/other.py").returncode == 0


def test_the_holder_itself_may_commit_its_own_paths_in_the_main_tree(project: Path, held: Ref) -> None:
    assert guard(project, "--install-git-hook", cwd=project).returncode == 0
    proven = {**ENV, "HANDOFF_REF": str(held), "HANDOFF_TOKEN": TOKEN}  # as its launch line sets them
    assert commit(project, "src/a1/core.py", env=proven).returncode == 0


def test_naming_the_holder_in_handoff_ref_without_its_token_stages_nothing_it_holds(project: Path, held: Ref) -> None:
    """``HANDOFF_REF`` is a variable anyone sets: the hook believes it only with the holder's report token,
    which its TASK's check line proves (another task's token, or none, is no proof)."""
    assert guard(project, "--install-git-hook", cwd=project).returncode == 0
    for claimed in ({"HANDOFF_REF": str(held)}, {"HANDOFF_REF": str(held), "HANDOFF_TOKEN": "a-token-of-another-task"}):
        refused = commit(project, "src/a1/core.py", env={**ENV, **claimed})
        assert refused.returncode != 0, claimed
        assert "src/a1/core.py" in refused.stderr
        assert "HANDOFF_TOKEN" in refused.stderr  # what the holder itself needs to commit
        git(project, "reset", "-q")


def test_the_lead_may_commit_once_the_executor_reported(store: Store, project: Path, held: Ref) -> None:
    assert guard(project, "--install-git-hook", cwd=project).returncode == 0
    store.release_writer(held, "none", "never started")
    assert commit(project, "src/a1/core.py").returncode == 0
    assert os.path.exists(project / "src/a1/core.py")


# A NUL or a lone surrogate cannot name a file (no system call takes them; Python refuses to encode
# them), so a path or a cwd holding one is never judged by the claims: it is denied.
UNNAMEABLE = st.sampled_from(["\0", "\ud800", "\udbff", "\udc80", "\udfff"])
_PIECES = st.sampled_from(["src/a1/", "src/b/", "", "/", "..", "x.py", "é", "\n"])


@st.composite
def hostile_place(draw: st.DrawFn, project: Path) -> tuple[str, str]:
    """(path, cwd) of a Write event: one of them, or both, holds an unnameable character somewhere."""
    pieces = st.lists(st.one_of(_PIECES, st.text(max_size=4)), max_size=4).map("".join)
    path = draw(st.sampled_from(["", f"{project}/"])) + draw(pieces)
    cwd = draw(st.sampled_from([str(project), f"{project}/src", "/"])) + draw(pieces)
    spoiled = draw(st.sampled_from(["path", "cwd", "both"]))
    for which in ("path", "cwd"):
        if spoiled in (which, "both"):
            text = path if which == "path" else cwd
            at = draw(st.integers(1 if which == "cwd" else 0, len(text)))  # a cwd stays absolute
            text = text[:at] + draw(UNNAMEABLE) + text[at:]
            path, cwd = (text, cwd) if which == "path" else (path, text)
    return path, cwd


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_nul_or_a_lone_surrogate_in_a_path_or_cwd_is_denied_never_exit_1(
    project: Path, held: Ref, data: st.DataObject
) -> None:
    path, cwd = data.draw(hostile_place(project))
    tool = data.draw(st.sampled_from(["Write", "Edit", "NotebookEdit"]))
    field = "notebook_path" if tool == "NotebookEdit" else "file_path"
    stdin = json.dumps({"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": {field: path}, "cwd": cwd})
    done = guard(project, "--lead", stdin=stdin)
    assert done.returncode in (0, 2), done.stderr[-400:]
    if done.returncode == 0:
        assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny", (path, cwd)

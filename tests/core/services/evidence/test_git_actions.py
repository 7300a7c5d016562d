"""The git actions a shell command takes, read from its words; what cannot be read is not guessed."""

from __future__ import annotations

from pathlib import Path

import pytest

from handoff_core.layout import AUTHORISED_ACTIONS
from handoff_core.services.evidence.git_actions import ACTIONS, git_steps


def test_the_hook_s_vocabulary_is_the_layout_s() -> None:
    assert frozenset(AUTHORISED_ACTIONS) == ACTIONS


@pytest.mark.parametrize(
    ("command", "actions"),
    [
        ("git commit -m 'a b'", ["commit"]),
        ("make && git -C sub push origin HEAD", ["push"]),
        ("GIT_DIR=x git --no-pager merge main; git rebase -i main", ["merge", "rebase"]),
        ("git reset --hard HEAD~1 || true", ["reset-hard"]),
        ("git reset --soft HEAD~1", []),
        ("git switch main | cat", ["switch-branch"]),
        ("git checkout -b new", ["switch-branch"]),
        ("git checkout -- a.py", []),
        ("git stash && git stash list", ["stash"]),
        ("env X=1 command git cherry-pick abc", ["commit"]),
        ("bash -lc 'cd x && git push'", ["push"]),
        ("echo git push", []),
        ("git add -A", ["stage"]),
        ("git status && git diff", []),
    ],
)
def test_each_action_is_read_from_the_command(command: str, actions: list[str], tmp_path: Path) -> None:
    steps = git_steps(command, str(tmp_path))
    assert steps is not None
    assert [step.action for step in steps] == actions


def test_a_checkout_of_an_existing_file_restores_it_and_of_anything_else_switches(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x\n")
    assert git_steps("git checkout a.py", str(tmp_path)) == []
    steps = git_steps("git checkout feature", str(tmp_path))
    assert steps is not None
    assert [step.action for step in steps] == ["switch-branch"]


def test_git_add_names_its_paths_and_whether_it_may_stage_everything(tmp_path: Path) -> None:
    (step,) = git_steps("git add -- src/a.py 'b c.py'", str(tmp_path)) or []
    assert (step.paths, step.stages_all) == (("src/a.py", "b c.py"), False)
    (step,) = git_steps("git add ':(glob)**'", str(tmp_path)) or []
    assert step.stages_all


def test_a_command_the_shell_grammar_cannot_split_is_not_guessed_at(tmp_path: Path) -> None:
    assert git_steps("git commit -m 'unclosed", str(tmp_path)) is None

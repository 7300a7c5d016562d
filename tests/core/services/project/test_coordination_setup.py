from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from handoff_core.errors import CoordinationInvalid, InvalidInput, UnsafePath, WriteConflict
from handoff_core.services.project.coordination import resolve
from handoff_core.services.project.coordination_setup import plan_choice, save_choice

SEED_EXAMPLE = b"""{
  "schema_version": 1,
  "defaults": {
    "mode": "herdr",
    "selection": "preferred",
    "guide": ".claude/skills/herdr/SKILL.md",
    "fallback": ["lead"]
  },
  "rules": []
}
"""


@pytest.fixture
def roots(tmp_path: Path) -> tuple[Path, Path]:
    project = tmp_path / "project"
    state = project / "speculo" / ".speculo"
    state.mkdir(parents=True)
    return state, project


def save(roots: tuple[Path, Path], mode: str, skills_dir: str | None = None):  # type: ignore[no-untyped-def]
    state, project = roots
    return save_choice(state, project, plan_choice(state, mode, skills_dir))


def config(roots: tuple[Path, Path]) -> Path:
    return roots[0] / "coordination" / "project.json"


def test_a_first_herdr_choice_is_written_byte_for_byte_as_the_seed_example(roots: tuple[Path, Path]) -> None:
    saved = save(roots, "herdr", ".claude/skills")
    assert config(roots).read_bytes() == SEED_EXAMPLE
    assert saved.outcome == "saved"


@pytest.mark.parametrize("mode", ["orca", "cli"])
def test_an_external_choice_prefers_the_tool_and_falls_back_to_lead(roots: tuple[Path, Path], mode: str) -> None:
    save(roots, mode, ".agents/skills" if mode == "orca" else None)
    data = json.loads(config(roots).read_text())
    assert (data["schema_version"], data["rules"]) == (1, [])
    assert {k: data["defaults"][k] for k in ("mode", "selection", "fallback")} == {
        "mode": mode,
        "selection": "preferred",
        "fallback": ["lead"],
    }
    assert ("guide" in data["defaults"]) == (mode == "orca")


def test_none_for_now_is_saved_as_lead_and_resolves_to_it(roots: tuple[Path, Path]) -> None:
    save(roots, "lead")
    data = json.loads(config(roots).read_text())
    assert data == {"schema_version": 1, "defaults": {"mode": "lead"}, "rules": []}
    assert resolve(config(roots).read_text(), "specdev/implement").choice == {"mode": "lead"}


@pytest.mark.parametrize("skills_dir", [".agents/skills", ".claude/skills"])
def test_the_guide_is_the_chosen_skills_dir_relative_to_the_project(roots: tuple[Path, Path], skills_dir: str) -> None:
    saved = save(roots, "orca", skills_dir)
    assert saved.defaults["guide"] == f"{skills_dir}/orca/SKILL.md"
    assert not Path(saved.defaults["guide"]).is_absolute()


@pytest.mark.parametrize(
    ("mode", "skills_dir"),
    [("herdr", None), ("orca", "/home/me/.claude/skills"), ("cli", ".claude/skills"), ("x", None)],
)
def test_a_choice_the_seed_does_not_offer_is_refused_and_nothing_is_written(
    roots: tuple[Path, Path], mode: str, skills_dir: str | None
) -> None:
    with pytest.raises(InvalidInput):
        save(roots, mode, skills_dir)
    assert not config(roots).exists()


def test_a_change_replaces_only_the_defaults_and_keeps_the_rules(roots: tuple[Path, Path]) -> None:
    rules = [{"work_id": "specdev/implement", "stage": "review", "choice": {"mode": "orca", "selection": "required"}}]
    config(roots).parent.mkdir()
    old = {"schema_version": 1, "defaults": {"mode": "cli", "tool": "codex", "model": "m1"}, "rules": rules}
    config(roots).write_text(json.dumps(old))
    saved = save(roots, "herdr", ".agents/skills")
    data = json.loads(config(roots).read_text())
    assert data["rules"] == rules
    assert data["defaults"] == {
        "mode": "herdr",
        "selection": "preferred",
        "guide": ".agents/skills/herdr/SKILL.md",
        "fallback": ["lead"],
    }  # the previous tool's tool and model are not carried over
    assert saved.outcome == "saved"


def test_a_change_to_another_mode_drops_the_previous_guide(roots: tuple[Path, Path]) -> None:
    save(roots, "herdr", ".claude/skills")
    save(roots, "cli")
    assert "guide" not in json.loads(config(roots).read_text())["defaults"]


def test_the_same_mode_keeps_its_known_tool_and_a_required_selection(roots: tuple[Path, Path]) -> None:
    config(roots).parent.mkdir()
    old = {"schema_version": 1, "defaults": {"mode": "cli", "selection": "required", "tool": "codex"}, "rules": []}
    config(roots).write_text(json.dumps(old))
    save(roots, "cli")
    defaults = json.loads(config(roots).read_text())["defaults"]
    assert defaults == {"mode": "cli", "selection": "required", "tool": "codex", "fallback": []}


def test_saving_the_choice_already_there_reuses_the_file_untouched(roots: tuple[Path, Path]) -> None:
    config(roots).parent.mkdir()
    config(roots).write_bytes(SEED_EXAMPLE.replace(b"\n", b"\r\n"))  # same content, other layout
    before = os.stat(config(roots))
    saved = save(roots, "herdr", ".claude/skills")
    assert saved.outcome == "reused"
    assert config(roots).read_bytes() == SEED_EXAMPLE.replace(b"\n", b"\r\n")
    assert os.stat(config(roots)).st_ino == before.st_ino


@pytest.mark.parametrize(
    "content",
    [
        b"{not json",
        b'{"schema_version": 2, "defaults": {"mode": "lead"}, "rules": []}',
        b'{"schema_version": 1, "defaults": {"mode": "teleport"}, "rules": []}',
        json.dumps(
            {
                "schema_version": 1,
                "defaults": {"mode": "lead"},
                "rules": [
                    {"work_id": "specdev/implement", "choice": {"mode": "cli"}},
                    {"work_id": "specdev/implement", "choice": {"mode": "orca"}},
                ],
            }
        ).encode(),
    ],
    ids=["not-json", "unknown-schema", "invalid", "conflict"],
)
def test_an_invalid_existing_file_is_kept_and_the_write_stops(roots: tuple[Path, Path], content: bytes) -> None:
    config(roots).parent.mkdir()
    config(roots).write_bytes(content)
    with pytest.raises(CoordinationInvalid):
        save(roots, "lead")
    assert config(roots).read_bytes() == content


def test_a_file_that_drifted_after_it_was_read_is_kept(roots: tuple[Path, Path]) -> None:
    state, project = roots
    save(roots, "lead")
    plan = plan_choice(state, "cli")
    edited = b'{"schema_version": 1, "defaults": {"mode": "orca"}, "rules": []}\n'
    config(roots).write_bytes(edited)
    with pytest.raises(WriteConflict):
        save_choice(state, project, plan)
    assert config(roots).read_bytes() == edited


def test_a_first_file_that_appears_after_planning_is_kept(roots: tuple[Path, Path]) -> None:
    state, project = roots
    plan = plan_choice(state, "cli")
    config(roots).parent.mkdir()
    config(roots).write_bytes(b'{"schema_version": 1, "defaults": {"mode": "lead"}, "rules": []}')
    with pytest.raises(WriteConflict):
        save_choice(state, project, plan)
    assert json.loads(config(roots).read_text())["defaults"] == {"mode": "lead"}


def test_a_symlinked_config_file_is_refused_and_its_target_untouched(roots: tuple[Path, Path], tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.json"
    target.write_bytes(b'{"schema_version": 1, "defaults": {"mode": "lead"}, "rules": []}')
    config(roots).parent.mkdir()
    config(roots).symlink_to(target)
    with pytest.raises(UnsafePath):
        save(roots, "cli")
    assert json.loads(target.read_text())["defaults"] == {"mode": "lead"}


def test_a_symlinked_coordination_folder_is_refused(roots: tuple[Path, Path], tmp_path: Path) -> None:
    (tmp_path / "other").mkdir()
    config(roots).parent.symlink_to(tmp_path / "other")
    with pytest.raises(UnsafePath):
        save(roots, "cli")
    assert list((tmp_path / "other").iterdir()) == []


def test_a_missing_skill_is_reported_with_the_installer_step_not_installed(roots: tuple[Path, Path]) -> None:
    saved = save(roots, "herdr", ".agents/skills")
    assert (saved.skill, "speculo init" in saved.next_step, "automation/herdr" in saved.next_step) == (
        "missing",
        True,
        True,
    )
    assert not (roots[1] / ".agents").exists()


def test_a_present_skill_is_reported_present_on_reuse(roots: tuple[Path, Path]) -> None:
    skill = roots[1] / ".claude" / "skills" / "orca" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: orca\n---\n")
    save(roots, "orca", ".claude/skills")
    again = save(roots, "orca", ".claude/skills")
    assert (again.outcome, again.skill, again.next_step) == ("reused", "present", "")


def test_a_cli_or_lead_choice_needs_no_skill(roots: tuple[Path, Path]) -> None:
    assert save(roots, "cli").skill == "not needed"

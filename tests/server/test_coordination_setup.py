"""save_coordination over MCP and `handoff-mcp coordination save` from the shell."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from mcp import Client

from tests.support.calls import call, refused
from tests.support.wire import SCRIPT

pytestmark = pytest.mark.anyio


async def test_the_lead_saves_the_seed_example_and_is_told_the_skill_is_missing(lead: Client, state_root: Path) -> None:
    saved = await call(lead, "save_coordination", mode="herdr", skills_dir=".claude/skills")
    assert (saved["outcome"], saved["skill"]) == ("saved", "missing")
    assert "speculo init" in saved["next_step"]
    assert json.loads((state_root / "coordination" / "project.json").read_text())["defaults"]["guide"] == (
        ".claude/skills/herdr/SKILL.md"
    )
    again = await call(lead, "save_coordination", mode="herdr", skills_dir=".claude/skills")
    assert again["outcome"] == "reused"


async def test_an_invalid_existing_file_refuses_the_save_with_its_code(lead: Client, state_root: Path) -> None:
    (state_root / "coordination").mkdir()
    (state_root / "coordination" / "project.json").write_text('{"schema_version": 7}')
    assert await refused(lead, "save_coordination", mode="lead") == "coordination_invalid"
    assert (state_root / "coordination" / "project.json").read_text() == '{"schema_version": 7}'


async def test_herdr_without_a_skills_dir_is_refused(lead: Client) -> None:
    assert await refused(lead, "save_coordination", mode="herdr") == "invalid_input"


@pytest.mark.slow
def test_the_cli_saves_the_choice_and_says_saved_then_reused(project: Path, state_root: Path) -> None:
    command = [str(SCRIPT), "coordination", "save", "orca", "--skills-dir", ".agents/skills"]
    command += ["--project-root", str(project)]
    first = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("saved ")
    assert "skill .agents/skills/orca/SKILL.md: missing" in first.stdout
    assert "nothing was installed" in first.stdout
    skill = project / ".agents" / "skills" / "orca" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: orca\n---\n")
    second = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert second.stdout.startswith("reused ")
    assert "skill .agents/skills/orca/SKILL.md: present" in second.stdout
    assert json.loads((state_root / "coordination" / "project.json").read_text())["defaults"]["mode"] == "orca"

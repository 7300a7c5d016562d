from __future__ import annotations

import json
from pathlib import Path

import pytest

from handoff_core.services.project.coordination import resolve

RULES = {
    "schema_version": 1,
    "defaults": {"mode": "lead"},
    "rules": [
        {"work_id": "specdev/implement", "choice": {"mode": "herdr", "selection": "preferred", "fallback": ["lead"]}},
        {"work_id": "specdev/implement", "stage": "review", "choice": {"mode": "orca", "selection": "required"}},
        {"work_id": "specdev/research", "choice": {"mode": "cli", "tool": "codex"}},
    ],
}


def text(data: object) -> str:
    return json.dumps(data)


def test_the_seed_example_file_resolves_to_its_defaults() -> None:
    example = {"schema_version": 1, "defaults": {"mode": "lead"}, "rules": []}
    found = resolve(text(example), "specdev/implement", "build")
    assert (found.choice, found.source, found.blocked) == ({"mode": "lead"}, "defaults", False)


def test_no_file_means_the_current_host_as_lead() -> None:
    assert resolve(None, "specdev/implement").choice == {"mode": "lead"}


@pytest.mark.parametrize(
    ("work", "stage", "mode", "source"),
    [
        ("specdev/implement", "review", "orca", "Work+stage rule #1"),
        ("specdev/implement", "build", "herdr", "Work rule #0"),
        ("specdev/implement", None, "herdr", "Work rule #0"),
        ("specdev/research", "review", "cli", "Work rule #2"),
        ("specdev/other", "review", "lead", "defaults"),
    ],
)
def test_precedence_is_work_and_stage_then_work_then_defaults(
    work: str, stage: str | None, mode: str, source: str
) -> None:
    found = resolve(text(RULES), work, stage)
    assert found.choice is not None
    assert (found.choice["mode"], found.source) == (mode, source)


def test_a_same_level_conflict_blocks_only_that_choice() -> None:
    data = json.loads(text(RULES))
    data["rules"].append({"work_id": "specdev/implement", "choice": {"mode": "cli"}})
    blocked = resolve(text(data), "specdev/implement", "build")
    assert blocked.blocked
    assert "different choices" in blocked.reasons[0]
    assert resolve(text(data), "specdev/implement", "review").choice == {"mode": "orca", "selection": "required"}
    assert resolve(text(data), "specdev/research").choice == {"mode": "cli", "tool": "codex"}


def test_identical_rules_at_one_level_are_no_conflict() -> None:
    data = json.loads(text(RULES))
    data["rules"].append(dict(data["rules"][2]))
    assert resolve(text(data), "specdev/research").choice == {"mode": "cli", "tool": "codex"}


def test_selection_required_with_a_fallback_is_invalid_and_blocks_that_work_only() -> None:
    data = json.loads(text(RULES))
    data["rules"][1]["choice"]["fallback"] = ["lead"]
    blocked = resolve(text(data), "specdev/implement", "review")
    assert blocked.blocked
    assert blocked.reasons
    assert resolve(text(data), "specdev/research").choice == {"mode": "cli", "tool": "codex"}


@pytest.mark.parametrize(
    "data",
    [
        "{not json",
        text({"schema_version": 2, "defaults": {"mode": "lead"}, "rules": []}),
        text({"schema_version": 1, "defaults": {"mode": "lead"}, "rules": [], "extra": 1}),
        text([]),
    ],
)
def test_a_file_invalid_at_the_top_blocks_every_choice(data: str) -> None:
    assert resolve(data, "specdev/implement").blocked


def test_invalid_defaults_block_only_choices_that_fall_through_to_them() -> None:
    data = json.loads(text(RULES))
    data["defaults"] = {"mode": "teleport"}
    assert resolve(text(data), "specdev/other").blocked
    assert resolve(text(data), "specdev/research").choice == {"mode": "cli", "tool": "codex"}


def test_the_bundled_schema_is_the_seed_schema(seeds: Path) -> None:
    seed = next(p for p in seeds.iterdir() if p.name.startswith("002_")).read_text()
    start = seed.index("package/template/references/coordination/project-facts.schema.json")
    body = seed[start:].split("\n@@", 1)[1].split("\n", 1)[1]
    lines = []
    for line in body.splitlines():
        if not line.startswith("+"):
            break
        lines.append(line[1:])
    bundled = Path(__file__).resolve().parents[4] / "handoff_core" / "data" / "project-facts.schema.json"
    assert json.loads("\n".join(lines)) == json.loads(bundled.read_text())


@pytest.mark.parametrize("depth", [2_000, 200_000])
def test_a_deeply_nested_file_blocks_the_choice_instead_of_failing(depth: int) -> None:
    text = '{"defaults": {"mode": "lead", "x": ' + "[" * depth + "]" * depth + "}}"
    found = resolve(text, "specdev/implement")
    assert found.blocked
    assert found.reasons == ("nested too deeply to read",)

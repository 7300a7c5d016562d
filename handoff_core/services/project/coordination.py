"""The coordination choice for a Work and stage, from ``coordination/project.json`` (SPEC §13).

Precedence: a Work+stage rule, then a Work rule, then ``defaults``; no file means ``lead``. An
invalid file or two different choices at the same level block only the choice they affect.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

__all__ = ["Resolution", "problems", "resolve"]

SCHEMA_FILE = "project-facts.schema.json"
DEFAULT_CHOICE: dict[str, Any] = {"mode": "lead"}


@dataclass(frozen=True)
class Resolution:
    work_id: str
    stage: str | None
    choice: dict[str, Any] | None  # None when blocked
    source: str
    reasons: tuple[str, ...] = field(default=())

    @property
    def blocked(self) -> bool:
        return self.choice is None


@lru_cache(maxsize=1)
def _validator() -> Any:
    import jsonschema  # only when a project.json exists

    schema = json.loads(resources.files("handoff_core").joinpath("data", SCHEMA_FILE).read_text())
    return jsonschema.Draft202012Validator(schema)


def _errors(data: Any) -> list[tuple[tuple[Any, ...], str]]:
    return [(tuple(e.absolute_path), e.message) for e in _validator().iter_errors(data)]


def problems(data: Any) -> list[str]:
    """Why ``data`` is not a valid file: schema errors, then rules giving two choices at one level."""
    found = [f"{'/'.join(map(str, path)) or 'the file'}: {message}" for path, message in _errors(data)]
    if found:
        return found
    levels: dict[tuple[str, str | None], set[str]] = {}
    for rule in data["rules"]:
        levels.setdefault((rule["work_id"], rule.get("stage")), set()).add(json.dumps(rule["choice"], sort_keys=True))
    return [
        f"rules for {work}{f' stage {stage}' if stage else ''} give different choices at one level"
        for (work, stage), choices in levels.items()
        if len(choices) > 1
    ]


def _rule_hits(rules: list[Any], work_id: str, stage: str | None) -> tuple[list[int], list[int]]:
    """Indexes of the Work+stage rules and of the Work-only rules for ``work_id``."""
    staged, plain = [], []
    for index, rule in enumerate(rules):
        if isinstance(rule, dict) and rule.get("work_id") == work_id:
            if "stage" not in rule:
                plain.append(index)
            elif stage is not None and rule.get("stage") == stage:
                staged.append(index)
    return staged, plain


def _touches(path: tuple[Any, ...], rules: list[Any], work_id: str) -> bool | None:
    """Whether an error at ``path`` bears on ``work_id``: True, False, or None for defaults."""
    if not path:
        return True
    if path[0] == "defaults":
        return None
    if path[0] == "rules" and len(path) > 1 and isinstance(path[1], int) and path[1] < len(rules):
        rule = rules[path[1]]
        work = rule.get("work_id") if isinstance(rule, dict) else None
        return not isinstance(work, str) or work == work_id or path[2:3] == ("work_id",)
    return True


def resolve(text: str | None, work_id: str, stage: str | None = None) -> Resolution:
    if text is None:
        return Resolution(work_id, stage, dict(DEFAULT_CHOICE), "no coordination/project.json: current host (lead)")
    try:
        data = json.loads(text)
    except ValueError as exc:
        return Resolution(work_id, stage, None, "coordination/project.json", (f"not valid JSON: {exc}",))
    except RecursionError:
        return Resolution(work_id, stage, None, "coordination/project.json", ("nested too deeply to read",))
    rules: list[Any] = data["rules"] if isinstance(data, dict) and isinstance(data.get("rules"), list) else []
    try:
        errors = _errors(data)
    except RecursionError:
        return Resolution(work_id, stage, None, "coordination/project.json", ("nested too deeply to read",))
    blocking = [m for p, m in errors if _touches(p, rules, work_id) is True]
    if blocking:
        return Resolution(work_id, stage, None, "coordination/project.json", tuple(blocking))
    staged, plain = _rule_hits(rules, work_id, stage)
    for level, indexes in (("Work+stage rule", staged), ("Work rule", plain)):
        choices = {json.dumps(rules[i]["choice"], sort_keys=True) for i in indexes}
        if len(choices) > 1:
            return Resolution(work_id, stage, None, level, (f"rules {indexes} give different choices at one level",))
        if choices:
            return Resolution(work_id, stage, dict(rules[indexes[0]]["choice"]), f"{level} #{indexes[0]}")
    defaults_errors = [m for p, m in errors if _touches(p, rules, work_id) is None]
    if defaults_errors:
        return Resolution(work_id, stage, None, "defaults", tuple(defaults_errors))
    return Resolution(work_id, stage, dict(data["defaults"]), "defaults")

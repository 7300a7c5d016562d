"""Saving the project's coordination choice (seed 000 first-setup.md § 项目协作选择).

A config file, unlike a handoff file, is meant to change: the first one is published write-once
(a file that appeared meanwhile stops the write), a later change replaces the whole file
atomically. Either way the existing file is validated first and kept when it is invalid; the
write re-reads it under the state-root lock and stops if it drifted since it was planned; the
result is read back. Nothing here installs a Skill: the answer only says whether the guide's
Skill is there, and how the seed's installer provides it when it is not.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from handoff_core.errors import CoordinationInvalid, InvalidInput, StorageError, WriteConflict
from handoff_core.files.locking import lock_state_root
from handoff_core.files.paths import read_regular, walked
from handoff_core.files.publishing import publish, replace_whole
from handoff_core.files.task_dir import translated
from handoff_core.layout import (
    COORDINATION_FILE,
    COORDINATION_MODES,
    SKILLS_DIRS,
    SaveOutcome,
    SkillState,
)
from handoff_core.services.project import coordination

__all__ = [
    "Plan",
    "Saved",
    "plan_choice",
    "save_choice",
]

SKILLED: Final = ("herdr", "orca")  # the modes whose guide is a Skill in the project
MAX_CONFIG_BYTES: Final = 1 << 20


def installer_step(mode: str) -> str:
    return f"rerun `speculo init` and tick automation/{mode} in its SKILLS-HUB, choosing the same skills directory"


@dataclass(frozen=True)
class Plan:
    """The file as it was read (None: absent) and the complete candidate that would replace it."""

    path: Path
    original: bytes | None
    candidate: bytes
    defaults: dict[str, Any]
    changed: bool  # False: the file already says this (reused, not rewritten)


@dataclass(frozen=True)
class Saved:
    path: Path
    outcome: SaveOutcome
    defaults: dict[str, Any]
    skill: SkillState
    next_step: str  # the installer step when the Skill is missing, else ""


def _render(value: Any, depth: int = 0) -> str:
    """JSON laid out as the seed's example: objects one key a line, lists of plain values inline."""
    pad, inner = "  " * depth, "  " * (depth + 1)
    if isinstance(value, dict) and value:
        items = [f"{inner}{json.dumps(k, ensure_ascii=False)}: {_render(v, depth + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + f"\n{pad}}}"
    if isinstance(value, list) and any(isinstance(v, dict | list) for v in value):
        return "[\n" + ",\n".join(f"{inner}{_render(v, depth + 1)}" for v in value) + f"\n{pad}]"
    if isinstance(value, list):
        return "[" + ", ".join(_render(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def _defaults(mode: str, skills_dir: str | None, old: dict[str, Any] | None) -> dict[str, Any]:
    if mode not in COORDINATION_MODES:
        raise InvalidInput(f"mode {mode!r} is not one of {', '.join(COORDINATION_MODES)} (lead: none for now)")
    if mode in SKILLED and skills_dir not in SKILLS_DIRS:
        raise InvalidInput(f"{mode} needs skills_dir: ask the user which, {' or '.join(SKILLS_DIRS)}")
    if mode not in SKILLED and skills_dir:
        raise InvalidInput(f"skills_dir is only for {' and '.join(SKILLED)}; {mode} needs no Skill: leave it out")
    if mode == "lead":
        return {"mode": "lead"}
    same = old is not None and old.get("mode") == mode
    chosen: dict[str, Any] = {"mode": mode, "selection": "preferred"}
    if same and old is not None:
        # A known tool and model of the same mode stay, and so does a selection the user made required.
        chosen |= {k: old[k] for k in ("tool", "model") if k in old}
        if old.get("selection") == "required":
            chosen["selection"] = "required"
    if mode in SKILLED:
        chosen["guide"] = f"{skills_dir}/{mode}/SKILL.md"
    chosen["fallback"] = [] if chosen["selection"] == "required" else ["lead"]
    return chosen


def _existing(path: Path, original: bytes) -> dict[str, Any]:
    """The existing file's content when it may be changed; CoordinationInvalid keeps it as it is."""
    stop = f"{path} was kept as it is and nothing was written"
    try:
        data = json.loads(original.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise CoordinationInvalid(f"{stop}: it is not valid JSON ({exc}); fix or remove it, then save again") from None
    if not isinstance(data, dict) or data.get("schema_version") != 1:
        version = data.get("schema_version") if isinstance(data, dict) else None
        raise CoordinationInvalid(f"{stop}: schema_version {version!r} is not 1, a schema this server does not know")
    problems = coordination.problems(data)
    if problems:
        raise CoordinationInvalid(f"{stop}: {'; '.join(problems[:5])}; fix it, then save again")
    return data


def _read(state_root: Path) -> bytes | None:
    folder, name = COORDINATION_FILE[:-1], COORDINATION_FILE[-1]
    try:
        with walked(state_root, folder) as fd:
            return read_regular(fd, name, limit=MAX_CONFIG_BYTES)
    except FileNotFoundError:
        return None


@translated
def plan_choice(state_root: Path, mode: str, skills_dir: str | None = None) -> Plan:
    """What saving ``mode`` would write, after validating what is there; nothing is written."""
    path = state_root.joinpath(*COORDINATION_FILE)
    original = _read(state_root)
    if original is None:
        old = None
        data: dict[str, Any] = {"schema_version": 1, "defaults": _defaults(mode, skills_dir, None), "rules": []}
    else:
        old = _existing(path, original)
        data = {**old, "defaults": _defaults(mode, skills_dir, old["defaults"])}
    changed = data != old
    return Plan(
        path, original, (_render(data) + "\n").encode() if changed else original or b"", data["defaults"], changed
    )


def _skill(project_root: Path, defaults: dict[str, Any]) -> tuple[SkillState, str]:
    if defaults["mode"] not in SKILLED:
        return "not needed", ""
    if project_root.joinpath(defaults["guide"]).is_file():
        return "present", ""
    return "missing", installer_step(defaults["mode"])


@translated
def save_choice(state_root: Path, project_root: Path, plan: Plan) -> Saved:
    """Write ``plan`` unless the file drifted since it was read; the answer says saved or reused."""
    folder, name = COORDINATION_FILE[:-1], COORDINATION_FILE[-1]
    with lock_state_root(state_root):
        if _read(state_root) != plan.original:
            raise WriteConflict(
                f"{plan.path} changed since it was read; it was kept as it is. Read it again and save again"
            )
        outcome: SaveOutcome = "saved" if plan.changed else "reused"
        if plan.changed:
            with walked(state_root, folder, create=True) as fd:
                if plan.original is None:
                    publish(fd, name, plan.candidate, mode=0o644)  # a file that appeared meanwhile stops this
                else:
                    replace_whole(fd, name, plan.candidate)  # drift was checked under the lock
        if _read(state_root) != plan.candidate:
            raise StorageError(f"{plan.path} did not read back as written; check the disk")
    skill, step = _skill(project_root, plan.defaults)
    return Saved(plan.path, outcome, plan.defaults, skill, step)

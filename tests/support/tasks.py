"""A TASK built for tests, with overrides."""

from __future__ import annotations

from typing import Any

from handoff_core.contract.scope import Scope, SharedPath
from handoff_core.contract.task import Task


def make_task(**overrides: object) -> Task:
    fields: dict[str, Any] = {
        "session": "20261130T044500Z",
        "task": "001-implement-a1",
        "kind": "implementation",
        "goal": "Implement A1.",
        "inputs": "SPEC.md",
        "scope": Scope(
            workspace="current",
            writable=("src/a1/**",),
            read_only=("docs/**",),
            shared=(SharedPath("pyproject.toml", "lead"),),
        ),
        "acceptance": "pytest exits 0",
        "report_path": "speculo/.speculo/specdev/changes/x/REPORT.md",
        "change": "2026-11-30-demo",
    }
    fields.update(overrides)
    return Task(**fields)

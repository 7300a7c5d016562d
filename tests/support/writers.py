"""A writer's original TASK and a test observation of it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.calls import task_args
from tests.support.changes import CHANGE


def observation(**overrides: Any) -> dict[str, Any]:
    base = task_args(topic="observe", kind="test-observation", workspace="", writable=[], shared=[])
    return {**base, **overrides}


def original_task(state_root: Path) -> Path:
    folder = state_root / "specdev" / "changes" / CHANGE / "sessions" / "20250101T000000Z" / "001-implement"
    folder.mkdir(parents=True)
    (folder / "TASK.md").write_text(ORIGINAL_TASK)
    return folder


ORIGINAL_TASK = """# 任务简报

## 身份与目标
session 20250101T000000Z, task 001-implement, implementation.

## 输入
SPEC.md.

## 工作区与范围
current workspace, src/**.

## 验收
pytest.

## 返回与通信
REPORT.md beside this file.
"""

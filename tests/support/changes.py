"""The change every test dispatches into, and how a test makes one."""

from __future__ import annotations

from pathlib import Path

from bench.requests import DEMO

__all__ = ["CHANGE", "make_change"]

CHANGE = DEMO


def make_change(state_root: Path, change: str = CHANGE, outcome: str = "active") -> Path:
    path = state_root / "specdev" / "changes" / change
    path.mkdir(parents=True)
    (path / "README.md").write_text(f"# {change}\n\nOutcome: {outcome}\n")
    return path

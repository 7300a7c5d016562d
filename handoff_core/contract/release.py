"""RELEASE.md: the Lead's evidence that a task's writers stopped (SPEC §8; this product's extension)."""

from __future__ import annotations

from typing import NamedTuple

from handoff_core.contract.markdown import check_fragment
from handoff_core.contract.report import header_fields
from handoff_core.errors import InvalidContent
from handoff_core.layout import RELEASE_KINDS, ReleaseKind

__all__ = ["Release", "release_problems", "render_release"]


class Release(NamedTuple):
    session: str
    task: str
    kind: ReleaseKind
    evidence: str  # the locator of the stop, or the reason there is no writer


def render_release(release: Release, details: str = "") -> str:
    if release.kind not in RELEASE_KINDS:
        raise InvalidContent(f"release kind {release.kind!r} is not 'stopped' or 'none'")
    evidence = " ".join(release.evidence.split())
    if not evidence:
        raise InvalidContent(
            "release evidence is empty: give the stop locator (e.g. 'herdr pane 3 exited, code 0') "
            "or the reason no writer runs"
        )
    notes = check_fragment(details, "release details") if details.strip() else "无"
    return "\n".join(
        [
            "# 写入释放",
            "",
            f"Session: {release.session}",
            f"Task: {release.task}",
            f"Writers: {release.kind}: {evidence}",
            "Released-by: Lead",
            "",
            "## Evidence",
            notes,
            "",
        ]
    )


def release_problems(text: str, session: str, task: str) -> list[str]:
    """Why RELEASE.md is not this task's evidence that its writers stopped (empty: it is)."""
    fields, duplicates = header_fields(text)
    problems = [f"RELEASE: duplicate {key}" for key in dict.fromkeys(duplicates)]
    if fields.get("Session") != session or fields.get("Task") != task:
        problems.append("RELEASE identity mismatch")
    kind, _, evidence = fields.get("Writers", "").partition(": ")
    if kind not in RELEASE_KINDS or not evidence.strip():
        problems.append("RELEASE needs a 'Writers: stopped: <locator>' or 'Writers: none: <reason>' line")
    return problems

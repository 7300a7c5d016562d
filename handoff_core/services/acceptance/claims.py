"""The passes a REPORT claims for its task's checks, read from its verification (untrusted text).

A line claims a check passed when it names the check (its command line, spaces collapsed and
backticks dropped, with or without a leading ``python -m``, ``uv run``...; or ``check N``) and
says it passed (``passed``, ``ok``, ``exit 0``, ``通过``...) without saying it failed; a line that
says all the checks or tests passed claims every one. Only a claim the replay contradicts is a
finding: a false green [seed result-and-recovery: 自报……在 Lead 核实前保持未验证].
"""

from __future__ import annotations

import re
from collections.abc import Callable

from handoff_core.contract.checks import Check
from handoff_core.contract.report import parse_report
from handoff_core.errors import InvalidContent

__all__ = ["claimed_passes"]

_PASS = re.compile(
    r"\b(pass(ed|es)?|ok|succeed(ed|s)?|success(ful)?|green|(exit(ed)?|exit code|returned|rc)\s*[:=]?\s*0)\b"
    r"|✓|✅|通过|成功",
    re.IGNORECASE,
)
_FAIL = re.compile(
    r"\b(fail(ed|s|ure|ing)?|errors?|not run|skipped|timed? ?out|(exit(ed)?|exit code|returned|rc)\s*[:=]?\s*[1-9])"
    r"|✗|❌|未通过|失败|未运行",
    re.IGNORECASE,
)
_NONE_FAILED = re.compile(r"\b(0|no) (failed|failures|errors?)\b", re.IGNORECASE)
_EVERY = re.compile(r"\ball\b.{0,40}\b(checks?|tests?)\b.{0,40}\bpass|全部通过", re.IGNORECASE)
_RUNNERS = ("python -m ", "python3 -m ", "uv run ", "poetry run ", "npx ", "pnpm ", "yarn ")
MAX_LINES = 2000  # lines of the verification read


def _plain(text: str) -> str:
    return " ".join(text.replace("`", " ").split()).casefold()


def _names(check: Check, number: int) -> Callable[[str], bool]:
    """Whether a line (plain) names the check: its command line, or its number."""
    run = _plain(check.run)
    shorter = next((run[len(p) :] for p in _RUNNERS if run.startswith(p) and " " in run[len(p) :]), run)
    numbered = re.compile(rf"\bcheck #?{number}\b")
    return lambda line: run in line or shorter in line or numbered.search(line) is not None


def _passes(line: str) -> bool:
    said = _NONE_FAILED.sub(" ", line)
    return bool(_PASS.search(said)) and not _FAIL.search(said)


def _verification(report: bytes) -> str:
    text = report.decode("utf-8", "replace")
    try:
        return parse_report(text).verification
    except InvalidContent:  # a REPORT that does not read as ours: every line of it is its word
        return text


def claimed_passes(report: bytes, checks: tuple[Check, ...]) -> list[bool]:
    """For each of ``checks``, whether the REPORT's verification claims it passed."""
    lines = [_plain(line) for line in _verification(report).split("\n")[:MAX_LINES]]
    every = any(_EVERY.search(line) and not _FAIL.search(_NONE_FAILED.sub(" ", line)) for line in lines)
    found = []
    for number, check in enumerate(checks, start=1):
        names = _names(check, number)
        found.append(every or any(_passes(line) for line in lines if names(line)))
    return found

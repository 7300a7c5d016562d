"""REPORTs built for tests: captured text, a plain report of a ref."""

from __future__ import annotations

import re

from bench.requests import report_of
from handoff_core.contract.ids import Ref
from handoff_core.contract.report import (
    Report,
)


def captured_text(report: Report) -> str | None:
    """The verbatim text of a Lead capture, as it was captured (fenced as ``text`` in its artifacts)."""
    if report.captured_by != "Lead":
        return None
    match = re.search(r"^(`{3,})text\n(.*)\n\1$", report.artifacts, re.DOTALL | re.MULTILINE)
    return match.group(2) if match else None


def report_for(ref: Ref, focused: str = "Did it. Tested it. Stopped. Next: review.") -> Report:
    return report_of(ref, status="completed", focused=focused, artifacts="src/a1/x.py", verification="pytest: exit 0")

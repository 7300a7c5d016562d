"""The texts of an external-web exchange that grow with the project stay bounded."""

from __future__ import annotations

from handoff_core.contract.exchange import exclusion_lines
from handoff_core.layout import EXCLUSIONS_SHOWN


def test_exclusions_past_the_shown_number_are_counted_not_listed() -> None:
    excluded = [{"path": f"keys/{n}.pem", "reason": "private key"} for n in range(EXCLUSIONS_SHOWN + 7)]
    lines = exclusion_lines(excluded)
    assert lines[0] == "keys/0.pem: private key"
    assert len(lines) == EXCLUSIONS_SHOWN + 1
    assert lines[-1].startswith("and 7 more: ")


def test_a_few_exclusions_are_all_listed() -> None:
    assert exclusion_lines([{"path": ".env", "reason": "secrets"}]) == [".env: secrets"]

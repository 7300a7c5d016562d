"""The passes a REPORT claims for its checks, read from its verification."""

from __future__ import annotations

import pytest

from handoff_core.contract.checks import Check
from handoff_core.contract.report import Report, render_report
from handoff_core.services.acceptance.claims import claimed_passes
from tests.support.gitrepo import FOCUS

CHECKS = (Check("python -m pytest -q tests"), Check("ruff check ."))


def report(verification: str) -> bytes:
    text = render_report(
        Report(
            session="20261130T044500Z",
            task="001-implement-a1",
            status="completed",
            focused=FOCUS,
            artifacts="src/a1/core.py",
            verification=verification,
        )
    )
    return text.encode()


@pytest.mark.parametrize(
    ("verification", "claims"),
    [
        ("`python -m pytest -q tests`: exit 0, 3 passed", [True, False]),
        ("- pytest -q tests → 3 passed, 0 failed\n- ruff check . → ok", [True, True]),
        ("check 2 passed", [False, True]),
        ("check 12 passed", [False, False]),
        ("`python -m pytest -q tests`: exit 1, 1 failed", [False, False]),
        ("python -m pytest -q tests: not run (no network)", [False, False]),
        ("All checks pass.", [True, True]),
        ("全部通过", [True, True]),
        ("ruff check .：通过", [False, True]),
        ("Tests were written.", [False, False]),
        ("pytest: exit 0", [False, False]),  # names no check: neither its command line nor its number
    ],
)
def test_a_line_claims_a_check_when_it_names_it_and_says_it_passed(verification: str, claims: list[bool]) -> None:
    assert claimed_passes(report(verification), CHECKS) == claims


def test_a_report_that_does_not_read_as_ours_is_read_whole() -> None:
    assert claimed_passes(b"ruff check . passed\n", CHECKS) == [False, True]

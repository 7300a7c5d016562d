"""What a split walk's child may do instead of glancing: run as real children by test_halves.

Each writes what it writes as the real child frames it (``framed``): refused for what it says.
"""

from __future__ import annotations

import marshal
import sys
import time

from handoff_core.services.tree.glance_records import framed


def exits() -> None:
    sys.exit(3)


def writes_nonsense() -> None:
    sys.stdout.write("nonsense")


def answers_other_rounds() -> None:
    sys.stdout.buffer.write(framed(("other", [])))


def answers_a_round_with_what_is_no_glance() -> None:
    _, _, _, rounds = marshal.load(sys.stdin.buffer)
    for name in rounds:
        sys.stdout.buffer.write(framed((name, [("001-a", *[None] * 18)])))


def never_ends() -> None:
    time.sleep(120)

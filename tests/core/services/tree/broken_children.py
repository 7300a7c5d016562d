"""What a split walk's child may do instead of glancing: run as real children by test_halves.

Loaded by a bare interpreter: nothing here imports more than the standard library.
"""

from __future__ import annotations

import marshal
import sys
import time


def exits() -> None:
    sys.exit(3)


def writes_nonsense() -> None:
    sys.stdout.write("nonsense")


def answers_other_rounds() -> None:
    sys.stdout.buffer.write(marshal.dumps(("other", [])))


def answers_a_round_with_what_is_no_glance() -> None:
    _, _, _, rounds = marshal.load(sys.stdin.buffer)
    for name in rounds:
        sys.stdout.buffer.write(marshal.dumps((name, [("001-a", *[None] * 18)])))


def never_ends() -> None:
    time.sleep(120)

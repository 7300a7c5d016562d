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


def files_a_glance_under_a_round_not_asked() -> None:
    _, facts, _, rounds = marshal.load(sys.stdin.buffer)
    for name in rounds:
        sys.stdout.buffer.write(marshal.dumps((name, [((facts[0], "another", "001-a"), *[None] * 18)])))


def never_ends() -> None:
    time.sleep(120)

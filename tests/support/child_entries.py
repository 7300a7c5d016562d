"""Entries a child interpreter runs in test_interpreter: the standard library only."""

from __future__ import annotations

import json
import os
import sys
import time


def echo_listing() -> None:
    """The question back, with the names in the directory handed over as descriptor 'fd'."""
    question = json.loads(sys.stdin.buffer.read())
    names = sorted(os.listdir(question["fd"]))
    sys.stdout.write(json.dumps({"question": question, "names": names, "json": json.__file__}))


def fails() -> None:
    sys.stderr.write("a reason\n")
    sys.exit(4)


def sleeps() -> None:
    time.sleep(120)

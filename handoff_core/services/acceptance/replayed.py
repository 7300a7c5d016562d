"""One acceptance check replayed: its supervisor (``containment.replay``) started as a child
interpreter of this server's code (``files.interpreter``), bounded in time, its answer read.

The check's environment is the server's, less what could hand it a credential (the push
credentials' variables, the server's own ``HANDOFF_*``, any name that says token, secret, password
or key) and with ``$HOME``, ``$TMPDIR`` and the XDG folders in its private folder. The supervisor
enforces the check's timeout; the server gives it ``GRACE_S`` more, then kills its whole process
group.
"""

from __future__ import annotations

import json
import marshal
import os
from dataclasses import dataclass

from handoff_core.contract.checks import Check
from handoff_core.files.interpreter import Child
from handoff_core.layout import CHECK_MAX_OUTPUT
from handoff_core.services.acceptance.scratch import Scratch
from handoff_core.services.containment.grants import CREDENTIAL_VARIABLES

__all__ = ["GRACE_S", "Refused", "Replayed", "check_environment", "replay"]

GRACE_S = 30.0  # past a check's timeout, the time its supervisor has to stop it and answer
_ENTRY = ("handoff_core.services.containment.replay", "main")
_ANSWER_LIMIT = 64 * 1024
_SECRET_WORDS = ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "API_KEY", "PRIVATE_KEY", "CREDENTIAL")


class Refused(Exception):
    """The kernel cannot contain a replay here: no check was run."""


@dataclass(frozen=True, kw_only=True)
class Replayed:
    run: str
    cwd: str
    exit_code: int | None  # None: it never ran to an end of its own (stopped, or never started)
    seconds: float
    tail: str  # the end of its output (standard output and error), untrusted text
    why: str  # "" when it passed; else how it failed ("exited 1", "timed out after 5 s", ...)
    claimed: bool = False  # the REPORT claims it passed

    @property
    def passed(self) -> bool:
        return not self.why


def check_environment(environ: dict[str, str], scratch: Scratch) -> dict[str, str]:
    """The variables a check runs with."""
    kept = {
        name: value
        for name, value in environ.items()
        if name not in CREDENTIAL_VARIABLES
        and not name.startswith(("HANDOFF_", "GIT_"))
        and not any(word in name.upper() for word in _SECRET_WORDS)
    }
    home = scratch.home
    kept.pop("XDG_RUNTIME_DIR", None)
    return kept | {
        "HOME": home,
        "TMPDIR": os.path.join(home, "tmp"),
        "XDG_CACHE_HOME": os.path.join(home, ".cache"),
        "XDG_CONFIG_HOME": os.path.join(home, ".config"),
        "XDG_DATA_HOME": os.path.join(home, ".local", "share"),
        "XDG_STATE_HOME": os.path.join(home, ".local", "state"),
    }


def _why(answer: dict[str, object], check: Check) -> str:
    code, stopped = answer.get("exit"), answer.get("why")
    if stopped == "timed_out":
        return f"timed out after {check.timeout_s} s: stopped, with every process it started"
    if stopped == "over_output":
        return f"stopped: wrote more than {CHECK_MAX_OUTPUT // (1024 * 1024)} MiB of output"
    if not isinstance(code, int):
        return "its supervisor gave no exit code"
    if code < 0:
        return f"killed by signal {-code}"
    return "" if code == 0 else f"exited {code}"


def _asked(child: Child, check: Check) -> dict[str, object]:
    said = child.answer(check.timeout_s + GRACE_S)
    if said is None:
        raise Refused(f"the replay's supervisor failed ({child.failure}): the check's result is unknown")
    try:
        answer = json.loads(said.read(_ANSWER_LIMIT))
    except ValueError as exc:
        raise Refused("the replay's supervisor answered something unreadable") from exc
    if not isinstance(answer, dict):
        raise Refused("the replay's supervisor answered something unreadable")
    if "refused" in answer:
        raise Refused(str(answer["refused"]))
    return answer


def replay(check: Check, folder: str, scratch: Scratch, secret_file: str, env: dict[str, str]) -> Replayed:
    """``check`` run in ``folder`` (inside the copy) under the replay's sandbox; ``Refused`` when it cannot be."""
    question = {
        "run": check.run,
        "cwd": folder,
        "timeout_s": check.timeout_s,
        "scratch": scratch.tree,
        "private": scratch.home,
        "secret_file": secret_file,
        "user_home": os.path.expanduser("~"),
        "env": env | {"PWD": folder},
    }
    try:
        child = Child.start(_ENTRY, marshal.dumps(question), ())
    except OSError as exc:
        raise Refused(f"cannot start the replay's supervisor: {exc}") from exc
    try:
        answer = _asked(child, check)
    finally:
        child.close(group=True)
    exit_code = answer.get("exit")
    seconds = answer.get("seconds")
    return Replayed(
        run=check.run,
        cwd=check.cwd,
        exit_code=exit_code if isinstance(exit_code, int) and not answer.get("why") else None,
        seconds=float(seconds) if isinstance(seconds, int | float) else 0.0,
        tail=str(answer.get("tail", "")),
        why=_why(answer, check),
    )

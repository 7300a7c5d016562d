"""Identifiers: change, round ("session" in the files) and task, exactly as the seed validator reads them."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from handoff_core.contract.record import NamedTuple
from handoff_core.errors import InvalidIdentifier
from handoff_core.layout import CHANGES, SESSIONS

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: handoff-validate never loads it
if TYPE_CHECKING:
    from datetime import datetime

__all__ = [
    "MAX_TASK_ID",
    "TOPIC_RE",
    "Ref",
    "check_change",
    "check_ref",
    "check_round",
    "check_task",
    "check_topic",
    "is_change_id",
    "is_round_id",
    "next_round",
    "next_task",
    "parse_ref",
    "ref_in",
    "round_base",
    "round_time",
    "task_number",
]

TOPIC = r"[a-z0-9]+(?:-[a-z0-9]+)*"
CHANGE_RE = re.compile(rf"^[0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}}-{TOPIC}\Z")
ROUND_RE = re.compile(r"^([0-9]{4})([0-9]{2})([0-9]{2})T([0-9]{2})([0-9]{2})([0-9]{2})Z(?:-([0-9]{2,}))?\Z")
TASK_RE = re.compile(rf"^([0-9]{{3,}})-{TOPIC}\Z")
TOPIC_RE = re.compile(rf"^{TOPIC}\Z")
MAX_TASK_ID = 64
_MAX_SAFE_INTEGER = 2**53 - 1
_DAYS = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


class Ref(NamedTuple):
    """One dispatch: ``change/session/task``."""

    change: str
    session: str
    task: str

    def __str__(self) -> str:
        return f"{self.change}/{self.session}/{self.task}"


_MONTHS, _LAST_HOUR, _LAST_MINUTE, _FEBRUARY = 12, 23, 59, 2
_JS_EXPONENT_FROM = 1e21  # JavaScript writes a number this large in exponent form


def _real_utc(year: int, month: int, day: int, hour: int, minute: int, second: int) -> bool:
    if not (1 <= month <= _MONTHS and hour <= _LAST_HOUR and minute <= _LAST_MINUTE and second <= _LAST_MINUTE):
        return False
    # The Gregorian rule, year 0 included as the seed's JavaScript Date takes it (leap, like 2000);
    # spelled out rather than importing calendar, which handoff-validate would pay for at start-up.
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    days = 29 if month == _FEBRUARY and leap else _DAYS[month]
    return 1 <= day <= days


def is_round_id(value: object) -> bool:
    match = ROUND_RE.match(value) if isinstance(value, str) else None
    if match is None:
        return False
    if not _real_utc(*(int(part) for part in match.groups()[:6])):
        return False
    suffix = match.group(7)
    return suffix is None or (int(suffix) > 0 and _js_number_text(suffix).rjust(2, "0") == suffix)


def _js_number_text(digits: str) -> str:
    """``String(Number(digits))`` in JavaScript: the shortest digits of the nearest double, written
    out in full below 1e21 (so a suffix beyond 2**53 is canonical exactly when the double is)."""
    value = float(int(digits))
    if value >= _JS_EXPONENT_FROM:
        return repr(value)  # exponent form: never equal to a run of digits
    mantissa, _, exponent = repr(value).partition("e")
    if not exponent:
        return mantissa.removesuffix(".0")
    shown = mantissa.replace(".", "")
    return shown + "0" * (int(exponent) + 1 - len(shown))


def task_number(value: object) -> int | None:
    """The task's number when ``value`` is a canonical task id, else None."""
    match = TASK_RE.match(value) if isinstance(value, str) else None
    if match is None:
        return None
    number = int(match.group(1))
    if not 0 < number <= _MAX_SAFE_INTEGER or f"{number:03d}" != match.group(1):
        return None
    return number


def is_change_id(value: object) -> bool:
    return isinstance(value, str) and CHANGE_RE.match(value) is not None


def _require(valid: bool, value: str, what: str, expected: str) -> str:
    if not valid:
        raise InvalidIdentifier(f"invalid {what} {value!r}: {expected}")
    return value


def check_change(value: str) -> str:
    expected = (
        "expected YYYY-MM-DD-topic (lowercase letters, digits, hyphens), e.g. 2026-11-30-demo; "
        "use the id of an existing change directory"
    )
    return _require(is_change_id(value), value, "change id", expected)


def check_round(value: str) -> str:
    expected = (
        "expected a real UTC instant YYYYMMDDTHHMMSSZ with an optional -NN suffix (-01, -02, …); "
        "pass a round returned by create_task, or omit it to open a new round"
    )
    return _require(is_round_id(value), value, "round id", expected)


def check_task(value: str) -> str:
    expected = (
        "expected NNN-topic with at least three digits and no extra leading zeros (001-fix, 042-review), "
        "topic in lowercase letters, digits and hyphens"
    )
    return _require(task_number(value) is not None, value, "task id", expected)


def check_topic(value: str) -> str:
    valid = TOPIC_RE.match(value) is not None and len(value) <= MAX_TASK_ID - 5
    expected = (
        f"use lowercase letters, digits and single hyphens (e.g. implement-a1), at most {MAX_TASK_ID - 5} characters"
    )
    return _require(valid, value, "topic", expected)


def check_ref(change: str, session: str, task: str) -> Ref:
    return Ref(check_change(change), check_round(session), check_task(task))


def ref_in(parts: Sequence[str]) -> Ref | None:
    """The active task whose directory holds ``parts`` (components below the state root), or None.

    The one way back from a path in the tree to its task: ``layout.task_parts`` is the way there.
    """
    at = len(CHANGES)  # change, SESSIONS, session, task follow
    if len(parts) < at + 4 or tuple(parts[:at]) != CHANGES or parts[at + 1] != SESSIONS:
        return None
    try:
        return check_ref(parts[at], parts[at + 2], parts[at + 3])
    except InvalidIdentifier:
        return None


def parse_ref(text: str) -> Ref:
    parts = text.strip().split("/")
    if len(parts) != len(Ref._fields):
        raise InvalidIdentifier(
            f"invalid ref {text!r}: expected change/session/task, as returned by create_task "
            "(e.g. 2026-11-30-demo/20261130T044500Z/001-implement-a1)"
        )
    return check_ref(*parts)


def round_time(value: str) -> datetime | None:
    """When a round was opened, from its id; None for anything that is not a round id."""
    if not is_round_id(value):
        return None
    from datetime import UTC, datetime  # here: handoff-validate never needs it

    try:
        return datetime.strptime(value[:16], "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    except ValueError:
        return None  # year 0: a valid id, but no datetime


def round_base(now: datetime) -> str:
    return now.strftime("%Y%m%dT%H%M%SZ")


def next_round(base: str, taken: Iterable[str]) -> str:
    """``base`` if free, else the smallest unused ``base-NN``."""
    used = set(taken)
    if base not in used:
        return base
    suffix = 1
    while f"{base}-{suffix:02d}" in used:
        suffix += 1
    return f"{base}-{suffix:02d}"


def next_task(topic: str, taken: Iterable[str]) -> str:
    """(largest number already used in the round) + 1, with the given topic."""
    numbers = [number_prefix(name) for name in taken]
    task = f"{max([n for n in numbers if n is not None], default=0) + 1:03d}-{check_topic(topic)}"
    if len(task) > MAX_TASK_ID:
        raise InvalidIdentifier(f"task id {task!r} is longer than {MAX_TASK_ID} characters; shorten the topic")
    return task


def number_prefix(name: str) -> int | None:
    """The number an entry occupies in a round, the way the seed counts (text before the first '-')."""
    head = name.split("-", 1)[0]
    return int(head) if head.isascii() and head.isdigit() else None

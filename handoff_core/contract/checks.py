"""A TASK's acceptance checks: each one shell line, run in a folder of the task's workspace within a
timeout, which the Lead replays at the reported checkpoint (``verify_task``).

They close the Acceptance section, after the Lead's free text: a line the reader knows them by
(``CHECKS_START``), one numbered line each for people, then a ``handoff-checks`` block that is
read back. The seed's validator sees plain Markdown and a closed fence. A section whose last
``- Checks:`` line is not followed by that block holds no checks: its text is all the Lead's.
"""

from __future__ import annotations

import re

from handoff_core.contract.frontmatter import load_yaml, quote
from handoff_core.contract.pattern import compile_on_use
from handoff_core.contract.record import NamedTuple
from handoff_core.errors import InvalidContent
from handoff_core.layout import DEFAULT_CHECK_TIMEOUT, MAX_CHECK_LINE, MAX_CHECK_TIMEOUT, MAX_CHECKS

__all__ = [
    "CHECKS_FENCE",
    "CHECKS_START",
    "Check",
    "check_checks",
    "checks_lines",
    "code_span",
    "quotes_label",
    "split_checks",
]

CHECKS_START = "- Checks: "
CHECKS_FENCE = "```handoff-checks"
_KEYS = frozenset({"run", "cwd", "timeout_s"})
_SEGMENT = compile_on_use(r"^[^/\\`\x00-\x1f\x7f]+\Z")
_LABEL = compile_on_use(rf"^\s*{re.escape(CHECKS_START.strip())}", re.IGNORECASE | re.MULTILINE)


class Check(NamedTuple):
    """One acceptance check: ``run`` in the folder ``cwd`` (relative to the task's root), at most
    ``timeout_s`` seconds; it passes when it exits 0."""

    run: str
    cwd: str = "."
    timeout_s: int = DEFAULT_CHECK_TIMEOUT


def _checked_cwd(cwd: str) -> str:
    folder = cwd.strip().rstrip("/") or "."
    if folder == ".":
        return folder
    parts = folder.split("/")
    if any(part in (".", "..") or not _SEGMENT.match(part) for part in parts) or not folder.isprintable():
        raise InvalidContent(
            f"check cwd {cwd!r} is not a folder relative to the task's root: no leading '/', '..', '.', "
            "backslash, backtick or control character (e.g. packages/api, or . for the root)"
        )
    return folder


def _checked(check: Check) -> Check:
    run = check.run
    if not run.strip() or run != run.strip() or not run.isprintable() or len(run) > MAX_CHECK_LINE:
        raise InvalidContent(
            f"check {run[:80]!r} must be one printable shell line of at most {MAX_CHECK_LINE} characters, "
            "without leading or trailing spaces (chain commands with && in one line)"
        )
    timeout = check.timeout_s
    if isinstance(timeout, bool) or not isinstance(timeout, int) or not 0 < timeout <= MAX_CHECK_TIMEOUT:
        raise InvalidContent(
            f"check {run[:80]!r}: timeout_s must be a whole number of seconds, 1 to {MAX_CHECK_TIMEOUT}"
        )
    return Check(run, _checked_cwd(check.cwd), timeout)


def check_checks(checks: tuple[Check, ...]) -> tuple[Check, ...]:
    """The Lead's checks, each one checked and its folder normalised; at most ``MAX_CHECKS``, none twice."""
    if len(checks) > MAX_CHECKS:
        raise InvalidContent(f"at most {MAX_CHECKS} acceptance checks; chain related commands in one line")
    found = tuple(_checked(check) for check in checks)
    seen = set()
    for check in found:
        if (check.run, check.cwd) in seen:
            raise InvalidContent(f"check {check.run[:80]!r} is listed twice in {check.cwd!r}; list each once")
        seen.add((check.run, check.cwd))
    return found


def quotes_label(text: str) -> bool:
    """Whether ``text`` (the Lead's free acceptance) holds a line that could pass for the checks' own."""
    return _LABEL.search(text) is not None


def code_span(text: str) -> str:
    """``text`` as a Markdown code span whatever backticks it holds: a longer run of them around it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def checks_lines(checks: tuple[Check, ...]) -> list[str]:
    """The lines that close the Acceptance section: none without checks."""
    if not checks:
        return []
    said = [
        f"{CHECKS_START}the Lead replays each one at your checkpoint (`verify_task`) in a clean copy of the tree, "
        "without network; each must exit 0. In the REPORT's verification, give each as its command and exit code.",
        *(
            f"  {number}. {code_span(check.run)} (in `{check.cwd}`, at most {check.timeout_s} s)"
            for number, check in enumerate(checks, start=1)
        ),
    ]
    values = [{"run": c.run, "cwd": c.cwd, "timeout_s": c.timeout_s} for c in checks]
    return [*said, CHECKS_FENCE, f"checks: {quote(values)}", "```"]


def _read(block: str) -> tuple[Check, ...]:
    data = load_yaml(block, "handoff-checks block")
    values = data.get("checks") if isinstance(data, dict) and set(data) == {"checks"} else None
    if not isinstance(values, list) or not all(isinstance(v, dict) and set(v) == _KEYS for v in values):
        raise InvalidContent("handoff-checks must list checks of run, cwd and timeout_s; render the TASK again")
    checks = []
    for value in values:
        run, cwd, timeout = value["run"], value["cwd"], value["timeout_s"]
        if not (isinstance(run, str) and isinstance(cwd, str) and isinstance(timeout, int)):
            raise InvalidContent("handoff-checks values are strings and a whole timeout; render the TASK again")
        checks.append(Check(run, cwd, timeout))
    return check_checks(tuple(checks))


def split_checks(section: str) -> tuple[str, tuple[Check, ...]]:
    """The Acceptance section as the Lead's text and its checks (none when it does not end with them)."""
    lines = section.split("\n")
    starts = [i for i, line in enumerate(lines) if line.startswith(CHECKS_START)]
    if not starts:
        return section, ()
    rest = lines[starts[-1] :]
    if rest.count(CHECKS_FENCE) != 1:
        return section, ()
    opened = rest.index(CHECKS_FENCE)
    try:
        closed = rest.index("```", opened + 1)
    except ValueError:
        raise InvalidContent("Acceptance has no closed ```handoff-checks block") from None
    return "\n".join(lines[: starts[-1]]), _read("\n".join(rest[opened + 1 : closed]))

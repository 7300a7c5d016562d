"""session-locator.json: one confirmed, absolute session-log path and nothing else (SPEC §6)."""

from __future__ import annotations

import json
import re

from handoff_core.contract.values import PLACEHOLDER_SEGMENT, is_real
from handoff_core.errors import InvalidLocator

__all__ = ["locator_problems", "parse_locator", "render_locator"]

_WINDOWS_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")
_UNC = re.compile(r"^\\\\[^\\/]+[\\/][^\\/]+[\\/]")


def locator_problems(value: object) -> list[str]:
    """The seed's ``validateSessionLocator``: schema first, then the path's form."""
    if not isinstance(value, dict):
        return ["session-locator: expected object"]
    problems = [f"session-locator: unknown {key}" for key in value if key != "path"]
    if "path" not in value:
        problems.insert(0, "session-locator: missing path")
    elif not isinstance(value["path"], str) or value["path"] == "":
        problems.append("session-locator.path: expected non-empty string")
    if problems:
        return problems
    path = value["path"]
    if not is_real(path) or PLACEHOLDER_SEGMENT.search(path):
        problems.append("path: placeholder or empty locator")
    if not (path.startswith("/") or _WINDOWS_DRIVE.match(path) or _UNC.match(path)):
        problems.append("path must be an absolute file path")
    return problems


def parse_locator(data: bytes) -> tuple[object, list[str]]:
    """The decoded JSON value and its problems (bad UTF-8 or JSON is a problem, not an exception)."""
    try:
        value = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return None, [f"session-locator.json is not valid UTF-8 JSON: {exc}"]
    except RecursionError:
        return None, ["session-locator.json is nested too deeply to read"]
    return value, locator_problems(value)


def render_locator(path: str) -> bytes:
    problems = locator_problems({"path": path})
    if problems:
        raise InvalidLocator(
            f"refused session log path {path!r}: {'; '.join(problems)}. Record only an absolute path you "
            "confirmed (POSIX /…, C:\\… or \\\\host\\share\\…); omit the locator when it cannot be confirmed"
        )
    return (json.dumps({"path": path}, ensure_ascii=False) + "\n").encode()

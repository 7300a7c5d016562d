"""What judges a task's acceptance checks, and which of the paths a task changed are among it.

A check passes or fails by more than the code it tests: its test files, pytest's ``conftest.py``,
the test configuration (``pytest.ini``, ``tox.ini``, the pytest and coverage sections of
``pyproject.toml`` and ``setup.cfg``), ``package.json``'s scripts, a ``Makefile``'s targets, and
whatever file its command line names. A task that changed one of these changed what judges it: its
pass says less than it seems [seed result-and-recovery: 执行者修改测试、配置或验收脚本时，判断是否改变了通过
标准，不接受伪绿色结果]. Each is named with why; the Lead decides whether the standard moved. For the three
shared configuration files only the sections that configure tests are compared (before and after),
so a dependency bump is not a finding; a side that cannot be read counts as changed.
"""

from __future__ import annotations

import configparser
import json
import posixpath
import re
import shlex
import tomllib
from collections.abc import Callable, Iterable

from handoff_core.contract.checks import Check

__all__ = ["Reader", "judging"]

Reader = Callable[[str], bytes | None]  # a path's bytes on one side (None: absent there)

_TEST_DIRS = frozenset({"test", "tests", "testing", "__tests__", "spec", "specs"})
_TEST_NAME = re.compile(r"^(test_.+\.py|.+_test\.(py|go|rb)|.+[._](test|spec)\.[cm]?[jt]sx?|conftest\.py)$")
_WHOLE = {
    "pytest.ini": "pytest's configuration",
    "tox.ini": "tox's configuration",
    "noxfile.py": "nox's sessions",
    ".coveragerc": "coverage's configuration",
    "Makefile": "a Makefile (its targets)",
    "makefile": "a Makefile (its targets)",
    "GNUmakefile": "a Makefile (its targets)",
}
_PYPROJECT_TOOLS = ("pytest", "coverage", "tox")
_SETUP_SECTIONS = re.compile(r"^(tool:pytest|pytest|coverage:.*)$")
_PACKAGE_KEYS = ("scripts", "jest", "mocha", "ava")


def _pyproject(data: bytes) -> object:
    tools = tomllib.loads(data.decode("utf-8")).get("tool", {})
    return {name: tools.get(name) for name in _PYPROJECT_TOOLS} if isinstance(tools, dict) else tools


def _setup_cfg(data: bytes) -> object:
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(data.decode("utf-8"))
    return {name: dict(parser[name]) for name in parser.sections() if _SETUP_SECTIONS.match(name)}


def _package_json(data: bytes) -> object:
    value = json.loads(data)
    return {key: value.get(key) for key in _PACKAGE_KEYS} if isinstance(value, dict) else value


_SECTIONS: dict[str, tuple[Callable[[bytes], object], str]] = {
    "pyproject.toml": (_pyproject, "its pytest, coverage or tox configuration"),
    "setup.cfg": (_setup_cfg, "its pytest or coverage section"),
    "package.json": (_package_json, "its scripts or test runner configuration"),
}


def _section_changed(path: str, before: Reader, after: Reader) -> str | None:
    """Why a shared configuration file's test sections count as changed; None when they are the same."""
    read, what = _SECTIONS[posixpath.basename(path)]
    try:
        old, new = (None if (data := side(path)) is None else read(data) for side in (before, after))
    except (ValueError, UnicodeDecodeError, configparser.Error, tomllib.TOMLDecodeError):
        return f"{what} may have changed (one side cannot be read)"
    return None if old == new else f"{what} changed"


def _named(checks: Iterable[Check], prefix: str) -> dict[str, str]:
    """The paths (relative to the top of the tree) that the checks' command lines name, each with its check."""
    found: dict[str, str] = {}
    for check in checks:
        try:
            words = shlex.split(check.run)
        except ValueError:
            words = check.run.split()
        folder = posixpath.normpath(posixpath.join(prefix, check.cwd))
        for word in words:
            candidate = word.split("::", 1)[0].rstrip("/")  # a pytest node id names its file
            if not candidate or candidate.startswith(("-", "/", "~", "$")) or "=" in candidate:
                continue
            path = posixpath.normpath(posixpath.join(folder, candidate))
            if path not in (".", "..") and not path.startswith("../"):
                found.setdefault(path, check.run)
    return found


def _why(path: str, named: dict[str, str], before: Reader, after: Reader) -> str | None:
    """Why ``path`` judges the checks; None when it does not."""
    name = posixpath.basename(path)
    if name in _SECTIONS:
        return _section_changed(path, before, after)
    if name in _WHOLE:
        return _WHOLE[name]
    if name.endswith(".mk"):
        return _WHOLE["Makefile"]
    if _TEST_NAME.match(name):
        return "pytest's conftest.py" if name == "conftest.py" else "a test file"
    if _TEST_DIRS & set(path.split("/")[:-1]):
        return "a file of a test folder"
    return next(
        (f"named by the check `{run[:120]}`" for target, run in named.items() if _at_or_below(path, target)), None
    )


def _at_or_below(path: str, target: str) -> bool:
    return path == target or path.startswith(f"{target}/")


def judging(
    changed: Iterable[str], checks: tuple[Check, ...], prefix: str, before: Reader, after: Reader
) -> list[tuple[str, str]]:
    """Of the ``changed`` paths (relative to the tree's top), those that judge ``checks`` (whose folders
    are relative to ``prefix``, the task's root in the tree), each with why."""
    named = _named(checks, prefix)
    return [(path, why) for path in changed if (why := _why(path, named, before, after)) is not None]

"""What the product imports is what it declares: every third-party top-level import of handoff_core
and server is a distribution named in pyproject.toml, not one that arrives through another."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OWN = {"handoff_core", "server"}
LATER_STDLIB = {"_sha2", "_sha256"}  # the built-in SHA-256: _sha2 from Python 3.12, _sha256 before it


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0].strip().lower().replace("_", "-")


def declared() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return {_name(requirement): requirement for requirement in project["dependencies"]}


def imported() -> dict[str, str]:
    """Each third-party top-level module the product imports, with one file that imports it."""
    found: dict[str, str] = {}
    for package in sorted(OWN):
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    top = name.partition(".")[0]
                    stdlib = top in sys.stdlib_module_names or top in LATER_STDLIB or top == "__future__"
                    if top not in OWN and not stdlib:
                        found.setdefault(top, str(path.relative_to(ROOT)))
    return found


def test_every_third_party_import_of_the_product_is_declared() -> None:
    distributions = packages_distributions()
    wanted = declared()
    undeclared = {
        module: where
        for module, where in imported().items()
        if not {_name(d) for d in distributions.get(module, [module])} & wanted.keys()
    }
    assert undeclared == {}, "declare these in pyproject.toml [project].dependencies"


def test_uvicorn_is_bounded_above_since_the_team_server_subclasses_its_internals() -> None:
    assert "<" in declared()["uvicorn"]

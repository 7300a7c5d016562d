"""The domain core stays independent of the MCP layer, and the validator stays light."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def imported_modules(package: str) -> set[str]:
    found: set[str] = set()
    for path in (ROOT / package).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add(node.module.split(".")[0])
    return found


def test_the_core_never_imports_the_mcp_layer_or_pydantic() -> None:
    assert not imported_modules("handoff_core") & {"mcp", "server", "pydantic"}


def test_the_validator_cli_loads_neither_mcp_nor_pydantic() -> None:
    code = (
        "import sys, handoff_core.validator, handoff_core.services.store\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'pydantic', 'server')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60, cwd=ROOT
    )
    assert result.stdout.strip() == "[]"


def test_the_validator_cli_needs_no_third_party_package_but_pyyaml() -> None:
    code = (
        "import sys, handoff_core.validator\n"
        "names = {m.split('.')[0] for m in sys.modules} - set(sys.stdlib_module_names)\n"
        "print(sorted(n for n in names if not n.startswith('_') and n not in ('handoff_core', 'cython_runtime')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60, cwd=ROOT
    )
    assert result.stdout.strip() == "['yaml']"

"""Each layer imports only from the layers below it; the core never sees MCP; the validator stays light."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

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


# Lowest first; a module may import its own layer and the ones before it, never one after.
LAYERS = (
    ("handoff_core.errors", "handoff_core.layout"),
    ("handoff_core.contract",),
    ("handoff_core.files",),
    ("handoff_core.services",),  # the package docstring; each room below is a layer of its own
    # The services' rooms, lowest first: a room imports its own modules and the rooms before it.
    ("handoff_core.services.rules",),
    ("handoff_core.services.secrets",),
    ("handoff_core.services.logs",),
    ("handoff_core.services.project",),
    ("handoff_core.services.tree",),
    ("handoff_core.services.capabilities",),
    ("handoff_core.services.evidence",),
    ("handoff_core.services.views",),
    ("handoff_core.services.writing",),
    ("handoff_core.services.exchange",),
    ("handoff_core.services.handoffs",),
    ("handoff_core.services.containment",),
    ("handoff_core.services.acceptance",),
    ("handoff_core.validator",),
    ("server", "server.config", "server.discovery", "server.client_config", "server.logs"),
    ("server.mcp",),
    ("server.web",),
    ("server.cli", "server.__main__"),
)


def layer_of(module: str) -> int | None:
    """The layer of the longest prefix naming ``module`` (``server.mcp.app`` is mcp's, not the root's)."""
    if module == "handoff_core":  # the package docstring: the map of these layers
        return 0
    best: tuple[int, int] | None = None  # (prefix length, layer)
    for index, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(f"{prefix}.")) and (best is None or len(prefix) > best[0]):
                best = (len(prefix), index)
    return None if best is None else best[1]


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


def upward_imports(name: str, source: str) -> list[str]:
    """Imports (function-level ones included) of ``source`` that reach a layer above ``name``'s."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found |= {f"{node.module}.{alias.name}" for alias in node.names} | {node.module}
    own = layer_of(name)
    assert own is not None, f"{name} belongs to no layer"
    return sorted(f"{name} -> {other}" for other in found if (layer_of(other) or 0) > own)


def project_modules() -> list[Path]:
    return [path for package in ("handoff_core", "server") for path in (ROOT / package).rglob("*.py")]


def test_every_module_belongs_to_a_layer() -> None:
    assert [module_name(path) for path in project_modules() if layer_of(module_name(path)) is None] == []


def test_each_layer_imports_only_from_the_layers_below_it() -> None:
    assert [hit for path in project_modules() for hit in upward_imports(module_name(path), path.read_text())] == []


def test_an_upward_import_is_caught_even_inside_a_function() -> None:
    source = "def f():\n    from handoff_core.services.writing.store import Store\n"
    assert upward_imports("handoff_core.contract.task", source) == [
        "handoff_core.contract.task -> handoff_core.services.writing.store",
        "handoff_core.contract.task -> handoff_core.services.writing.store.Store",
    ]
    assert upward_imports("server.mcp.app", source) == []


def test_the_mcp_interface_never_imports_the_web_or_the_command_line() -> None:
    source = "from server.web.board import board_app\nimport server.cli.command_line\n"
    assert upward_imports("server.mcp.tools.lead", source) == [
        "server.mcp.tools.lead -> server.cli.command_line",
        "server.mcp.tools.lead -> server.web.board",
        "server.mcp.tools.lead -> server.web.board.board_app",
    ]
    assert upward_imports("server.cli.command_line", source) == []


def test_the_shared_modules_of_the_adapter_import_no_interface() -> None:
    assert upward_imports("server.config", "from server.mcp.services import Services\n") == [
        "server.config -> server.mcp.services",
        "server.config -> server.mcp.services.Services",
    ]


def test_the_core_never_imports_the_mcp_layer_or_pydantic() -> None:
    assert not imported_modules("handoff_core") & {"mcp", "server", "pydantic"}


def printed_by(code: str) -> str:
    """What a fresh interpreter prints running ``code``: imports measured without this process's."""
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60, cwd=ROOT
    )
    return result.stdout.strip()


@pytest.mark.slow
def test_the_validator_cli_loads_neither_mcp_nor_pydantic() -> None:
    code = (
        "import sys, handoff_core.validator, handoff_core.services.writing.store\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'pydantic', 'server')))"
    )
    assert printed_by(code) == "[]"


@pytest.mark.slow
def test_the_validator_cli_starts_without_any_third_party_package() -> None:
    """PyYAML included: it is loaded only for frontmatter the fast reader leaves to it."""
    code = (
        "import sys, handoff_core.validator\n"
        "names = {m.split('.')[0] for m in sys.modules} - set(sys.stdlib_module_names)\n"
        "print(sorted(n for n in names if not n.startswith('_') and n not in ('handoff_core', 'cython_runtime')))"
    )
    assert printed_by(code) == "[]"


SLOW_TO_LOAD = (
    "concurrent.futures",
    "logging",
    "asyncio",
    "threading",
    "dataclasses",
    "inspect",
    "hashlib",
    "datetime",
)


@pytest.mark.slow
def test_the_validator_cli_loads_no_thread_pool_logging_asyncio_dataclasses_hashlib_or_datetime() -> None:
    """Each costs milliseconds at every start (concurrent.futures pulls in logging, dataclasses pulls in
    inspect, hashlib OpenSSL): the validator's records are named tuples, the others load late."""
    code = f"import sys, handoff_core.validator\nprint(sorted(m for m in {SLOW_TO_LOAD!r} if m in sys.modules))"
    assert printed_by(code) == "[]"


@pytest.mark.slow
def test_the_guard_hook_loads_no_sdk_no_store_and_starts_no_git() -> None:
    """It runs before every write an executor makes: one TASK read, nothing more."""
    code = (
        "import sys, server.cli.guard\n"
        "heavy = ('mcp', 'pydantic', 'yaml', 'cryptography', 'subprocess', 'handoff_core.services.tree.queries')\n"
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    assert printed_by(code) == "[]"


def project_imports(path: Path, modules: set[str]) -> set[str]:
    """The project modules ``path`` imports anywhere: at the top, in a function, under TYPE_CHECKING."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found |= {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
    return found & modules


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every set of modules that import one another round a circle (Tarjan's components, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        while work:
            node, rest = work[-1]
            child = next(rest, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    members = stack[stack.index(node) :]
                    del stack[stack.index(node) :]
                    if len(members) > 1:
                        cycles.append(sorted(members))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                work.append((child, iter(sorted(graph[child]))))
            elif child in stack:
                low[node] = min(low[node], index[child])
    return cycles


def project_cycles() -> list[list[str]]:
    paths = {module_name(path): path for path in project_modules()}
    return import_cycles({name: project_imports(path, set(paths)) - {name} for name, path in paths.items()})


def test_a_circle_is_found_through_imports_in_functions_and_under_type_checking(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import a\ndef f():\n    from b import c\n"
    )
    assert project_imports(source, {"a", "b", "b.c", "d"}) == {"a", "b", "b.c"}
    assert import_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_module_is_in_an_import_cycle() -> None:
    assert project_cycles() == []


MAX_LINES = 350  # a module a reader holds at once


def test_no_module_is_longer_than_350_lines() -> None:
    lengths = {str(path.relative_to(ROOT)): len(path.read_text().splitlines()) for path in project_modules()}
    assert {name: n for name, n in lengths.items() if n > MAX_LINES} == {}


def imports_outside_support(path: Path) -> list[str]:
    """The ``tests`` modules ``path`` imports from outside ``tests.support``, anywhere in it."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return sorted(name for name in found if name.split(".")[0] == "tests" and not name.startswith("tests.support."))


def test_a_test_module_imported_by_another_is_caught(tmp_path: Path) -> None:
    source = tmp_path / "test_x.py"
    source.write_text("from tests.support.calls import call\ndef f():\n    from tests.server.test_tools import call\n")
    assert imports_outside_support(source) == ["tests.server.test_tools.call"]


def test_shared_test_helpers_are_imported_from_tests_support_only() -> None:
    """No test module, conftest or helper elsewhere in tests/ is imported by another module: what the
    tests share lives in tests/support, and conftest.py holds fixtures."""
    paths = [*(ROOT / "tests").rglob("*.py"), *(ROOT / "bench").rglob("*.py")]
    found = {
        str(path.relative_to(ROOT)): imports_outside_support(path) for path in paths if "node_modules" not in path.parts
    }
    assert {path: names for path, names in found.items() if names} == {}

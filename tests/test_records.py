"""Wide records (six fields or more) are built by keyword: two adjacent fields of one type can never swap unseen."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WIDE = 6


def _fields(cls: ast.ClassDef) -> int:
    return sum(
        1
        for node in cls.body
        if isinstance(node, ast.AnnAssign)
        and isinstance(node.target, ast.Name)
        and "ClassVar" not in ast.unparse(node.annotation)
    )


def _kind(cls: ast.ClassDef) -> str | None:
    if any(ast.unparse(base) in ("NamedTuple", "typing.NamedTuple") for base in cls.bases):
        return "named tuple"
    decorators = [ast.unparse(d) for d in cls.decorator_list if "dataclass" in ast.unparse(d)]
    return decorators[0] if decorators else None


def wide_records(sources: dict[str, str]) -> dict[str, str]:
    """Name -> how it is declared, for every record class of six fields or more in ``sources``."""
    found = {}
    for source in sources.values():
        for node in ast.parse(source).body:
            if isinstance(node, ast.ClassDef) and (kind := _kind(node)) and _fields(node) >= WIDE:
                found[node.name] = kind
    return found


def _name_of(func: ast.expr) -> str | None:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def positional_constructions(sources: dict[str, str], names: set[str]) -> list[str]:
    """``path:line Name`` for each call of a wide record that passes a field by position."""
    found = []
    for path, source in sources.items():
        tree = ast.parse(source)
        # A narrow class of the same name defined right here is another record (archives.Entry).
        local = {node.name for node in tree.body if isinstance(node, ast.ClassDef) and _fields(node) < WIDE}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            func = node.func
            if _name_of(func) == "builds" and len(node.args) > 1:  # hypothesis: builds(Record, *fields)
                func = node.args[0]
            if _name_of(func) in names - local:
                found.append(f"{path}:{node.lineno} {_name_of(func)}")
    return found


def sources_of(*packages: str) -> dict[str, str]:
    return {
        str(path.relative_to(ROOT)): path.read_text() for package in packages for path in (ROOT / package).rglob("*.py")
    }


def test_every_wide_dataclass_is_keyword_only() -> None:
    records = wide_records(sources_of("handoff_core", "server"))
    assert records, "the check found no wide record at all: it is looking in the wrong place"
    assert [name for name, kind in records.items() if kind.startswith("dataclass") and "kw_only=True" not in kind] == []


def test_no_wide_record_is_built_by_position_anywhere() -> None:
    names = set(wide_records(sources_of("handoff_core", "server")))
    assert positional_constructions(sources_of("handoff_core", "server", "tests", "bench"), names) == []


def test_a_positional_construction_is_caught_by_a_bare_name_and_through_a_module() -> None:
    record = "from typing import NamedTuple\nclass Wide(NamedTuple):\n" + "".join(f"    f{i}: int\n" for i in range(6))
    calls = "Wide(1, f1=2)\nmodule.Wide(1, 2)\nWide(f0=1)\nNarrow(1, 2)\nst.builds(Wide, st.none())\nst.builds(Wide)\n"
    other = "class Wide:\n    f0: int\n\nWide(1)\n"  # a narrow record of the same name, defined here
    sources = {"record.py": record, "calls.py": calls, "other.py": other}
    assert wide_records(sources) == {"Wide": "named tuple"}
    assert positional_constructions(sources, {"Wide"}) == ["calls.py:1 Wide", "calls.py:2 Wide", "calls.py:5 Wide"]

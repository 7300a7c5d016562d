"""The documentation pages that describe the code stay true to it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYOUT_PAGE = ROOT / "docs" / "layout.md"
CODE_PACKAGES = ("handoff_core", "server")
# One line per package (``pkg/sub/``) or module (``pkg/mod.py``): "- `path` — what it is".
ENTRY = re.compile(r"^- `((?:handoff_core|server)/[^`]*)` — (.*)$", re.MULTILINE)


def code_layout(root: Path) -> set[str]:
    """Every package (as ``dir/``) and module (as ``dir/name.py``) of the code, relative to ``root``."""
    found: set[str] = set()
    for package in CODE_PACKAGES:
        for path in (root / package).rglob("*.py"):
            relative = path.relative_to(root)
            found.add(f"{relative.parent.as_posix()}/" if path.name == "__init__.py" else relative.as_posix())
    return found


def layout_problems(page: str, code: set[str]) -> list[str]:
    """What is wrong with a layout page, one sentence per module, naming it and what to do."""
    entries = ENTRY.findall(page)
    listed = [path for path, _ in entries]
    problems = [
        f"{path} is not in docs/layout.md: add the line '- `{path}` — <what it is>'"
        for path in sorted(code - set(listed))
    ]
    problems += [
        f"{path} is in docs/layout.md but does not exist: remove its line" for path in sorted(set(listed) - code)
    ]
    problems += [
        f"{path} is in docs/layout.md twice: keep one line"
        for path in sorted({p for p in listed if listed.count(p) > 1})
    ]
    problems += [
        f"{path} has no description in docs/layout.md: say what it is" for path, text in entries if not text.strip()
    ]
    return problems


def test_the_layout_page_lists_every_package_and_module_of_the_code_and_nothing_else() -> None:
    problems = layout_problems(LAYOUT_PAGE.read_text(), code_layout(ROOT))
    assert not problems, "\n".join(problems)


def test_a_new_module_or_a_removed_one_is_named_by_the_layout_check(tmp_path: Path) -> None:
    (tmp_path / "server" / "web").mkdir(parents=True)
    for name in ("server/__init__.py", "server/web/__init__.py", "server/web/watcher.py", "server/logs.py"):
        (tmp_path / name).write_text("")
    page = "- `server/` — the adapter.\n- `server/web/` — HTTP.\n- `server/web/watcher.py` — the watcher.\n"
    page += "- `server/loopback.py` — gone.\n- `server/web/` — again.\n"
    assert layout_problems(page, code_layout(tmp_path)) == [
        "server/logs.py is not in docs/layout.md: add the line '- `server/logs.py` — <what it is>'",
        "server/loopback.py is in docs/layout.md but does not exist: remove its line",
        "server/web/ is in docs/layout.md twice: keep one line",
    ]

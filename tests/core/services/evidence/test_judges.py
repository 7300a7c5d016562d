"""What judges a task's checks: test files, their configuration, what a check's command names; and
for the shared configuration files, only a change to the sections that configure tests."""

from __future__ import annotations

import pytest

from handoff_core.contract.checks import Check
from handoff_core.services.evidence.judges import judging

PYTEST = (Check("python -m pytest -q tests/unit"),)


def judged(paths: list[str], before: dict[str, bytes] | None = None, after: dict[str, bytes] | None = None,
           checks: tuple[Check, ...] = PYTEST, prefix: str = "") -> list[tuple[str, str]]:  # fmt: skip
    return judging(paths, checks, prefix, (before or {}).get, (after or {}).get)


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("tests/test_calc.py", "a test file"),
        ("pkg/calc_test.go", "a test file"),
        ("web/app.spec.ts", "a test file"),
        ("web/app.test.jsx", "a test file"),
        ("src/conftest.py", "pytest's conftest.py"),
        ("tests/fixtures/data.json", "a file of a test folder"),
        ("pytest.ini", "pytest's configuration"),
        ("tox.ini", "tox's configuration"),
        ("Makefile", "a Makefile (its targets)"),
        ("build/rules.mk", "a Makefile (its targets)"),
    ],
)
def test_a_file_that_defines_a_check_is_named_with_why(path: str, why: str) -> None:
    assert judged([path]) == [(path, why)]


def test_the_code_under_test_does_not_judge_its_checks() -> None:
    assert judged(["src/calc/__init__.py", "README.md", "docs/testing.md"]) == []


def test_a_path_the_command_line_names_judges_it_from_the_checks_folder() -> None:
    checks = (Check("sh scripts/check.sh --strict", "app"), Check("node run.js fixtures/"))
    found = judged(["app/scripts/check.sh", "fixtures/a.txt", "scripts/check.sh"], checks=checks)
    assert found == [
        ("app/scripts/check.sh", "named by the check `sh scripts/check.sh --strict`"),
        ("fixtures/a.txt", "named by the check `node run.js fixtures/`"),
    ]


def test_a_pytest_node_id_names_its_file_and_a_prefix_places_the_task_root() -> None:
    checks = (Check("pytest checks/run_it.py::test_one"),)
    assert judged(["pkg/checks/run_it.py"], checks=checks, prefix="pkg") == [
        ("pkg/checks/run_it.py", "named by the check `pytest checks/run_it.py::test_one`")
    ]


PYPROJECT = b'[project]\nname = "x"\ndependencies = ["a"]\n\n[tool.pytest.ini_options]\naddopts = "-q"\n'


def test_a_dependency_bump_in_pyproject_is_no_finding_but_its_pytest_section_is() -> None:
    bumped = PYPROJECT.replace(b'["a"]', b'["a", "b"]')
    assert judged(["pyproject.toml"], {"pyproject.toml": PYPROJECT}, {"pyproject.toml": bumped}) == []
    skipping = PYPROJECT.replace(b'"-q"', b'"-q -k nothing"')
    assert judged(["pyproject.toml"], {"pyproject.toml": PYPROJECT}, {"pyproject.toml": skipping}) == [
        ("pyproject.toml", "its pytest, coverage or tox configuration changed")
    ]


def test_a_setup_cfg_pytest_section_and_package_json_scripts_are_compared() -> None:
    cfg = b"[metadata]\nname = x\n\n[tool:pytest]\naddopts = -q\n"
    assert judged(["setup.cfg"], {"setup.cfg": cfg}, {"setup.cfg": cfg.replace(b"name = x", b"name = y")}) == []
    assert judged(["setup.cfg"], {"setup.cfg": cfg}, {"setup.cfg": cfg.replace(b"-q", b"-x")}) != []
    package = b'{"name": "x", "version": "1", "scripts": {"test": "jest"}}'
    assert judged(["package.json"], {"package.json": package}, {"package.json": package.replace(b'"1"', b'"2"')}) == []
    assert judged(["package.json"], {"package.json": package}, {"package.json": package.replace(b"jest", b"true")}) == [
        ("package.json", "its scripts or test runner configuration changed")
    ]


def test_a_configuration_file_new_or_unreadable_on_one_side_counts_as_changed() -> None:
    assert judged(["pyproject.toml"], {}, {"pyproject.toml": PYPROJECT}) != []  # new, with a pytest section
    assert judged(["pyproject.toml"], {"pyproject.toml": PYPROJECT}, {"pyproject.toml": b"[broken"}) == [
        ("pyproject.toml", "its pytest, coverage or tox configuration may have changed (one side cannot be read)")
    ]

"""The policy a return is judged by: read back from a manifest, and applied entry by entry."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from handoff_core.contract.return_policy import (
    LIFECYCLE_SCRIPTS,
    ReturnPolicy,
    entry_refusal,
    held_because,
    policy_for,
    policy_from,
)
from handoff_core.errors import InvalidContent

TEXT = policy_for("review")


def test_a_policy_survives_its_round_trip_through_the_manifest() -> None:
    observed = policy_for("test-observation")
    assert policy_from(observed.as_json(), "test-observation") == observed
    assert observed.content == ("text", "image")


def test_a_manifest_from_before_recorded_policies_is_judged_by_its_kind() -> None:
    assert policy_from(None, "implementation") == policy_for("implementation") == ReturnPolicy()


@pytest.mark.parametrize(
    "value",
    [
        [],
        {"entries": 10},
        {**ReturnPolicy().as_json(), "entries": 0},
        {**ReturnPolicy().as_json(), "entries": True},
        {**ReturnPolicy().as_json(), "entry_bytes": "2 MiB"},
        {**ReturnPolicy().as_json(), "content": ["text", "executable"]},
        {**ReturnPolicy().as_json(), "content": []},
        {**ReturnPolicy().as_json(), "extra": 1},
    ],
)
def test_a_malformed_recorded_policy_is_refused_not_guessed(value: object) -> None:
    with pytest.raises(InvalidContent):
        policy_from(value, "review")


@pytest.mark.parametrize(
    "name",
    [".GIT/config", "candidate/.Git/hooks/pre-commit", "candidate/.git", ".GitHub/Workflows/x.yml", "a/.VSCode/x"],
)
def test_auto_run_paths_are_matched_whatever_their_case(name: str) -> None:
    assert (entry_refusal(tuple(name.split("/")), 0o644, b"x\n", TEXT) or "").startswith("an auto-run file")


# Files that act by themselves once they sit in a checkout: CI definitions, editor, tool-version and
# agent settings, commit-hook configuration.
MORE_AUTO_RUN = [
    ".gitea/workflows/ci.yml",
    "candidate/.forgejo/workflows/ci.yaml",
    ".gitea/actions/setup/action.yml",
    ".woodpecker.yml",
    "candidate/.woodpecker/build.yaml",
    "appveyor.yml",
    ".appveyor.yml",
    ".cirrus.yml",
    "project.code-workspace",
    ".mise.toml",
    "mise.toml",
    "candidate/.mise/config.toml",
    "opencode.json",
    "candidate/.opencode/plugin.ts",
    ".roo/mcp.json",
    ".windsurf/workflows/x.md",
    ".zed/tasks.json",
    "lint-staged.config.js",
    ".lintstagedrc.json",
]


@pytest.mark.parametrize("name", MORE_AUTO_RUN)
def test_ci_editor_tool_and_agent_settings_of_every_kind_are_refused(name: str) -> None:
    parts = tuple(name.upper().split("/"))
    assert (entry_refusal(parts, 0o644, b"x: 1\n", TEXT) or "").startswith("an auto-run file"), name


@pytest.mark.parametrize(
    "name", ["RETURN.md", "candidate/src/app.py", "PATCH.diff", "candidate/.gitignore", "docs/github.md"]
)
def test_plain_text_is_taken_back(name: str) -> None:
    assert entry_refusal(tuple(name.split("/")), 0o644, "caf\u00e9 = 1\n".encode(), TEXT) is None


def test_a_folder_is_judged_by_its_name_only() -> None:
    assert entry_refusal(("candidate", "src"), 0o755, None, TEXT) is None
    assert entry_refusal(("candidate", ".husky"), 0o755, None, TEXT) is not None


@pytest.mark.parametrize("name", ["conftest.py", "Makefile", "setup.py", "pyproject.toml", "build.rs", "tox.ini"])
def test_files_the_leads_tools_run_are_held_in_any_folder_and_case(name: str) -> None:
    assert held_because(("candidate", "deep", name.upper()), b"x\n") is not None
    assert held_because((name,), b"x\n") is not None


@pytest.mark.parametrize(
    "path",
    [
        ".pytest.ini",
        "pytest.toml",
        ".cargo/config.toml",
        "candidate/.cargo/config",
        "postcss.config.js",
        "tailwind.config.ts",
        "rollup.config.mjs",
        "next.config.cjs",
        ".prettierrc.js",
        "candidate/web/svelte.config.js",
    ],
)
def test_tool_configuration_that_is_code_or_runs_code_is_held(path: str) -> None:
    assert held_because(tuple(path.split("/")), b"module.exports = {}\n") is not None, path


@given(st.sampled_from(sorted(LIFECYCLE_SCRIPTS)), st.text(max_size=20))
def test_a_package_json_with_any_lifecycle_script_is_held_naming_it(script: str, command: str) -> None:
    body = json.dumps({"name": "x", "scripts": {"test": "jest", script: command}}).encode()
    reason = held_because(("package.json",), body)
    assert reason is not None
    assert script in reason


@pytest.mark.parametrize("body", [b'{"scripts": {"test": "jest", "build": "tsc"}}', b'{"name": "x"}'])
def test_a_package_json_without_lifecycle_scripts_is_taken(body: bytes) -> None:
    assert held_because(("package.json",), body) is None


@pytest.mark.parametrize("body", [b"not json", b"[1]", b'{"scripts": ["postinstall"]}'])
def test_a_package_json_that_cannot_be_read_is_held(body: bytes) -> None:
    assert held_because(("package.json",), body) is not None


def test_ordinary_sources_are_not_held() -> None:
    assert held_because(("candidate", "src", "a.py"), b"x = 1\n") is None
    assert held_because(("RETURN.md",), b"# Return\n") is None

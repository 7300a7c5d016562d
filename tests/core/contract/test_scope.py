"""The handoff-scope block: rendered for people and for the claim reader, and read back."""

from __future__ import annotations

import pytest

from handoff_core.contract.scope import Scope, SharedPath, check_scope, read_scope, workspace_of
from handoff_core.contract.scope_text import scope_lines
from handoff_core.errors import InvalidContent


def block(scope: Scope) -> str:
    return "\n" + "\n".join(scope_lines(scope)) + "\n"


def test_every_field_of_a_scope_reads_back_from_its_block() -> None:
    scope = Scope(
        workspace="required",
        writable=("src/a/**",),
        read_only=("docs/**",),
        shared=(SharedPath("pyproject.toml", "lead"),),
        artifacts=(),
        notes="",
        resources=("port:5432",),
    )
    assert read_scope(block(scope)) == scope


def test_a_text_with_two_scope_blocks_has_no_readable_scope() -> None:
    scope = Scope(workspace="current", writable=("src/a/**",))
    assert read_scope(block(scope) + block(Scope(workspace="required", writable=("docs/**",)))) is None


@pytest.mark.parametrize("value", ["", "current", "required"])
def test_a_workspace_is_current_required_or_none(value: str) -> None:
    assert workspace_of(value) == (value or None)


def test_any_other_workspace_is_refused() -> None:
    with pytest.raises(InvalidContent):
        workspace_of("shared")


def test_a_resource_must_be_a_plain_name() -> None:
    with pytest.raises(InvalidContent):
        check_scope("implementation", Scope(workspace="current", writable=("src/**",), resources=("Port 5432",)))
    assert check_scope(
        "implementation", Scope(workspace="current", writable=("src/**",), resources=("git-index",))
    ).resources == ("git-index",)

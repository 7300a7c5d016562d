"""An audit's judgement of many paths at once says what judging each alone says."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from hypothesis import example, given, settings
from hypothesis import strategies as st

from handoff_core.contract.scope import Scope, SharedPath
from handoff_core.files.git_process import Change
from handoff_core.services.evidence.audit_record import judged, judged_all
from handoff_core.services.rules.scope_rule import ScopeRule

PROJECT = "/p/project"
SEGMENTS = ("src", "a1", "b", "speculo", ".speculo", "x.py", ".", "README.md", "docs")


class Task(NamedTuple):
    kind: str
    task: str
    session: str
    scope: Scope


def _rule(worktree: str, state: str, writable: tuple[str, ...]) -> ScopeRule:
    scope = Scope(workspace="required", writable=writable, shared=(SharedPath("docs/**", "lead"),), worktree=worktree)
    task = Task("implementation", "001-a", "20261204T101500Z", scope)
    return ScopeRule(task, "c/20261204T101500Z/001-a", Path(PROJECT), Path(state))


paths = st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=4).map("/".join)
changes = st.lists(
    st.builds(Change, st.sampled_from("AMDR"), paths, st.one_of(st.none(), paths)), min_size=1, max_size=12
)


@settings(max_examples=300, deadline=None)
@example(  # the handoff tree inside the task's root: its paths fail even where a glob allows them
    changes=[Change("M", "speculo/.speculo/x.py")], worktree="", state=f"{PROJECT}/speculo/.speculo", writable=("**",)
)
@example(changes=[Change("A", ".")], worktree="", state="/p/state", writable=("**",))  # the root itself
@given(
    changes=changes,
    worktree=st.sampled_from(("", "/p/wt", f"{PROJECT}/speculo/.speculo/wt")),
    state=st.sampled_from((f"{PROJECT}/speculo/.speculo", "/p/state", "/p/wt/speculo/.speculo")),
    writable=st.sampled_from((("src/**",), ("**",), ("src/a1/*.py", "README.md"), ("speculo/**",))),
)
def test_judging_changes_together_says_what_judging_each_says(
    changes: list[Change], worktree: str, state: str, writable: tuple[str, ...]
) -> None:
    rule = _rule(worktree, state, writable)
    top = rule.root_text
    assert judged_all(rule, top, changes, "p: ") == [v for c in changes for v in judged(rule, top, c, "p: ")]


@settings(max_examples=300, deadline=None)
@example(relatives=["speculo/.speculo/x.py"], worktree="", state=f"{PROJECT}/speculo/.speculo", writable=("**",))
@example(relatives=["speculo/.speculo"], worktree="", state=f"{PROJECT}/speculo/.speculo", writable=("**",))
@example(relatives=["src/x.py", "."], worktree="", state="/p/state", writable=("**",))
@given(
    relatives=st.lists(paths, max_size=8),
    worktree=st.sampled_from(("", "/p/wt", f"{PROJECT}/speculo/.speculo/wt")),
    state=st.sampled_from((f"{PROJECT}/speculo/.speculo", "/p/state", "/p/wt/speculo/.speculo")),
    writable=st.sampled_from((("src/**",), ("**",), ("src/a1/*.py", "README.md"), ("speculo/**",))),
)
def test_all_paths_plainly_allowed_at_once_says_what_testing_each_says(
    relatives: list[str], worktree: str, state: str, writable: tuple[str, ...]
) -> None:
    rule = _rule(worktree, state, writable)
    top = rule.root_text
    plain = rule.plainly_allowed(top)
    expected = plain is not None and all(plain(relative) for relative in relatives)
    assert rule.all_plainly_allowed(top, relatives) == expected

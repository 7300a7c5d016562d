"""A report token opens only the task whose TASK records its hash, whatever else the tree quotes."""

from __future__ import annotations

import dataclasses
import re

import pytest

from bench.requests import review
from handoff_core.contract.ids import Ref
from handoff_core.errors import QuotedTokenCheck
from handoff_core.services.capabilities.token_index import TokenIndex
from handoff_core.services.capabilities.tokens import token_check
from handoff_core.services.writing.dispatch import TaskRequest
from handoff_core.services.writing.store import Store

TOKEN_A = "token-of-task-a"
FIELDS = ("goal", "inputs", "acceptance", "return_notes")


def dispatched(store: Store, topic: str, token: str, **overrides: object) -> Ref:
    request: TaskRequest = dataclasses.replace(review(topic, **overrides), token_check=lambda ref: token_check(token))
    return store.create_task(request).ref


def check_line(store: Store, ref: Ref) -> str:
    text = (store.roots.task_dir(ref) / "TASK.md").read_text()
    match = re.search(r"^- Report token check: `sha256:[0-9a-f]{64}`$", text, re.MULTILINE)
    assert match is not None
    return match.group(0)


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("form", ["{line}", "```\n{line}\n```", "> {line}", "  {upper}"])
def test_a_dispatch_quoting_a_check_line_is_refused_in_any_field_and_form(store: Store, field: str, form: str) -> None:
    line = check_line(store, dispatched(store, "review-a", TOKEN_A))
    quoted = "Compare with task A.\n\n" + form.format(line=line, upper=line.upper())
    with pytest.raises(QuotedTokenCheck) as caught:
        dispatched(store, "review-b", "token-of-b", **{field: quoted})
    assert caught.value.code == "quoted_token_check"
    assert len(store.queries.status()) == 1


def test_a_check_line_in_the_scope_notes_is_refused_too(store: Store) -> None:
    line = check_line(store, dispatched(store, "review-a", TOKEN_A))
    scope = review().body.scope._replace(notes=line)
    with pytest.raises(QuotedTokenCheck):
        dispatched(store, "review-b", "token-of-b", scope=scope)


def _plant(store: Store, source: Ref, session: str, goal_line: str) -> Ref:
    """A TASK written by hand in another round: ``source``'s text under its own ids, a Goal quoting ``goal_line``."""
    text = (store.roots.task_dir(source) / "TASK.md").read_text()
    text = text.replace(source.session, session).replace("## Goal\n", f"## Goal\n{goal_line}\n\n", 1)
    planted = Ref(source.change, session, source.task)
    folder = store.roots.task_dir(planted)
    folder.mkdir(parents=True)
    (folder / "TASK.md").write_text(text)
    return planted


@pytest.mark.parametrize("session", ["20200101T000000Z", "20991231T235959Z"])  # before and after A's round
def test_a_hand_planted_task_quoting_a_check_line_never_takes_that_tasks_place(store: Store, session: str) -> None:
    a = dispatched(store, "review-a", TOKEN_A)
    other = dispatched(store, "review-b", "token-of-b")
    _plant(store, other, session, check_line(store, a))
    without_own = _plant(store, other, session.replace("00Z", "01Z").replace("59Z", "58Z"), check_line(store, a))
    path = store.roots.task_dir(without_own) / "TASK.md"
    path.write_text(re.sub(r"^- Report token check: .*\n", "", path.read_text(), flags=re.MULTILINE))
    for first in (TOKEN_A, "token-of-b"):  # a fresh index each time, asked in either order
        index = TokenIndex(store.roots.state_root)
        index.ref_of(first)
        assert index.ref_of(TOKEN_A) == a
        assert index.ref_of("token-of-b") is None  # two TASKs record its hash: it opens neither


def test_a_copy_of_another_tasks_task_file_does_not_open_with_its_token(store: Store) -> None:
    a = dispatched(store, "review-a", TOKEN_A)
    copy = store.roots.task_dir(Ref(a.change, "20200101T000000Z", "001-copy"))
    copy.mkdir(parents=True)
    (copy / "TASK.md").write_bytes((store.roots.task_dir(a) / "TASK.md").read_bytes())
    assert TokenIndex(store.roots.state_root).ref_of(TOKEN_A) == a

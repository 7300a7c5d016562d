"""A task's derived status: the notes a full judgement and a glance add to it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import cast

from hypothesis import event, given
from hypothesis import strategies as st

from handoff_core.contract.frontmatter import split_frontmatter
from handoff_core.contract.ids import Ref
from handoff_core.contract.scope import SCOPE_FENCE, Scope, scope_from
from handoff_core.contract.strict_yaml import load_strict
from handoff_core.contract.task import TaskBody, task_of
from handoff_core.contract.task_file import render_task
from handoff_core.contract.validate import LATE_REPORT
from handoff_core.errors import HandoffError, InvalidContent
from handoff_core.layout import KINDS, Kind
from handoff_core.services.tree.status import task_kind_and_scope
from handoff_core.services.writing.store import Store
from tests.support.changes import CHANGE
from tests.support.writers import original_task


def test_a_released_original_contract_task_without_a_report_is_never_said_to_have_a_late_report(
    store: Store, state_root: Path
) -> None:
    # The archive check tells the Lead to end an original-contract writer with release_writer: its
    # RELEASE is then the only closing file, and no REPORT came after it.
    folder = original_task(state_root)
    store.release_writer(Ref(CHANGE, "20250101T000000Z", "001-implement"), "stopped", "pane 3 exited")
    assert not (folder / "REPORT.md").exists()
    for glancing in (False, True):
        (found,) = store.queries.status(CHANGE, glancing=glancing)
        assert found.label == "original-contract:released"
        assert not any(note.startswith(LATE_REPORT) for note in found.notes), found.notes


_GLOBS = st.lists(st.sampled_from(["src/**", "docs/*.md", "a b/**", "tests/**", "x"]), max_size=3, unique=True)
_EDITS = st.sampled_from(["", "kind-line", "no-closing", "block-twice", "block-list", "block-number", "crlf"])


def _edited(text: str, edit: str) -> str:
    """A rendered TASK, as a hand may have left it: each edit takes one reader off its fast path."""
    block = text[text.index("```handoff-scope\n") : text.index("```", text.index("```handoff-scope\n") + 3) + 3]
    return {
        "": text,
        "kind-line": re.sub(r'^kind: "([a-z-]+)"$', r"kind: '\1'", text, count=1, flags=re.M),
        "no-closing": text.replace("\n---\n", "\n--\n", 1),
        "block-twice": text + "\n" + block + "\n",
        "block-list": text.replace("writable: [", "writable:\n  - x\nnone: [", 1),
        "block-number": text.replace("artifacts: []", "artifacts: [1]", 1),
        "crlf": text.replace("\n", "\r\n"),
    }[edit]


def _full_kind_and_scope(data: bytes) -> tuple[object, Scope | None]:
    """The slow readers: the frontmatter split in full, the one scope block by the strict YAML loader."""
    text = data.decode("utf-8")
    try:
        kind = split_frontmatter(text)[0].get("kind")
    except HandoffError:
        return None, None
    opener = f"\n{SCOPE_FENCE}\n"
    if text.count(opener) != 1 or (end := text.find("\n```", text.find(opener) + 1)) < 0:
        return (kind if kind in KINDS else None), None
    try:
        scope = scope_from(load_strict(text[text.find(opener) + len(opener) : end], "block"), "")
    except InvalidContent:
        scope = None
    return (kind if kind in KINDS else None), scope


@given(st.sampled_from(sorted(KINDS)), _GLOBS, _GLOBS, _GLOBS, _EDITS)
def test_the_claim_reader_of_a_tasks_kind_and_scope_agrees_with_the_full_readers(
    kind: str, writable: list[str], read_only: list[str], artifacts: list[str], edit: str
) -> None:
    writer = kind == "implementation"
    scope = Scope(
        workspace="current" if writer else None,
        writable=tuple(writable or ["src/**"]) if writer else (),
        read_only=tuple(read_only),
        artifacts=() if writer else tuple(artifacts),
    )
    body = TaskBody(kind=cast(Kind, kind), goal="Do it.", inputs="diff", scope=scope, acceptance="done")
    rendered = render_task(
        task_of(body, session="20261130T000000Z", task="001-do-it", change=CHANGE, report_path="x/REPORT.md")
    )
    data = _edited(rendered, edit).encode()
    event(edit or "as rendered")
    assert task_kind_and_scope(data) == _full_kind_and_scope(data)

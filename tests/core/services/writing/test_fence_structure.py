"""No text field can publish a file whose sections the seed's reader sees otherwise than ours.

The seed's reader (``markdownBodyLines`` of its runtime, which validate-handoff.mjs calls) takes a
code fence only at the first column; CommonMark, and ``contract.markdown``, up to three spaces in.
``seed_body_lines`` below is that reading. Every text field of a TASK, a REPORT and a RELEASE gets
a fence in every form (``` or ~~~, longer runs, info strings, indented 0-3 spaces at either end)
around a heading of the document: the writer either publishes a file that both readers split into
the same sections and that our validator passes, or refuses a text the seed would have misread.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.requests import report_of, review
from handoff_core.contract.markdown import body_lines
from handoff_core.contract.report import parse_report
from handoff_core.contract.scope import Scope
from handoff_core.errors import InvalidContent
from handoff_core.layout import REPORT_NEXT
from handoff_core.services.writing.store import Store
from tests.support.changes import CHANGE, make_change
from tests.support.fences import headings, seed_body_lines
from tests.support.reports import captured_text

FOCUS = "Read it. Found two issues. Stopped. Next: fix."
TASK_FIELDS = ("goal", "inputs", "acceptance", "return_notes", "scope notes")
REPORT_FIELDS = ("focused", "artifacts", "verification", "unverified", "problems")


def seed_misreads(fragment: str) -> bool:
    """Whether, to the seed, a fragment changes a document's sections: a heading of its own, or a fence left open."""
    return bool(headings(seed_body_lines(fragment))) or "## probe" not in seed_body_lines(f"{fragment}\n## probe")


fences = st.builds(
    lambda char, extra, info, left, right: (
        f"{' ' * left}{char * (3 + extra)}{info}",
        f"{' ' * right}{char * (3 + extra)}",
    ),
    st.sampled_from("`~"),
    st.integers(0, 2),
    st.sampled_from(["", "python", " js title"]),
    st.integers(0, 3),
    st.integers(0, 3),
)


def fragment(fence: tuple[str, str], heading: str) -> str:
    return f"Intro line.\n\n{fence[0]}\n{heading}\nbody\n{fence[1]}\n\nAfter the block."


def _store(root: Path) -> Store:
    state = root / "state"
    make_change(state)
    return Store(state, root)


def _same_sections(text: str) -> None:
    ours = headings([line for _, line in body_lines(text)])
    assert headings(seed_body_lines(text)) == ours


def _publish_task(store: Store, field: str, text: str) -> Path:
    if field == "scope notes":
        request = review(scope=Scope(workspace=None, writable=(), read_only=("src/**",), notes=text))
    else:
        request = review(**{field: text})
    return store.create_task(request).path


def _publish_report(store: Store, field: str, text: str) -> Path:
    ref = store.create_task(review()).ref
    values = {"focused": FOCUS, "artifacts": "none", "verification": "ok", field: text}
    report = report_of(
        ref,
        status="completed",
        focused=values.pop("focused"),
        artifacts=values.pop("artifacts"),
        verification=values.pop("verification"),
        **values,
    )
    return store.write_report(report, CHANGE, accept_warnings=True).path


def _publish_release(store: Store, field: str, text: str) -> Path:
    ref = store.create_task(review()).ref
    return store.release_writer(ref, "none", "no writer was started", text).path


def _check(publish: Callable[[Store, str, str], Path], field: str, text: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = _store(Path(folder))
        try:
            path = publish(store, field, text)
        except InvalidContent:
            assert seed_misreads(text), text  # refused: the seed would have read the sections otherwise
            return
        published = path.read_text()
        _same_sections(published)
        for status in store.queries.status():
            assert status.problems == (), status.problems


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(TASK_FIELDS), fences, st.sampled_from(["## Return", "## Inputs", "# Title"]))
def test_a_task_field_with_any_fence_publishes_only_what_the_seed_reads_alike(
    field: str, fence: tuple[str, str], heading: str
) -> None:
    _check(_publish_task, field, fragment(fence, heading))


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(REPORT_FIELDS), fences, st.sampled_from([f"## {REPORT_NEXT}", "## 聚焦交接", "# Title"]))
def test_a_report_field_with_any_fence_publishes_only_what_the_seed_reads_alike(
    field: str, fence: tuple[str, str], heading: str
) -> None:
    _check(_publish_report, field, fragment(fence, heading))


@pytest.mark.parametrize("indent", [" ", "  ", "   "])
@pytest.mark.parametrize("field", ["goal", "problems", "focused"])
def test_a_fence_indented_by_one_to_three_spaces_is_refused(indent: str, field: str, tmp_path: Path) -> None:
    store = _store(tmp_path)
    text = fragment((f"{indent}```python", f"{indent}```"), "## Return")
    with pytest.raises(InvalidContent) as caught:
        (_publish_task if field == "goal" else _publish_report)(store, field, text)
    assert "indented code fence" in caught.value.message
    assert seed_misreads(text)


def test_a_fence_at_the_first_column_is_still_published_and_hides_its_heading(tmp_path: Path) -> None:
    store = _store(tmp_path)
    path = _publish_task(store, "goal", fragment(("~~~~ sh", "~~~~"), "## Return"))
    _same_sections(path.read_text())
    assert store.queries.status()[0].problems == ()


@settings(max_examples=60, deadline=None)
@given(fences, st.sampled_from(["## Evidence", "# Title"]))
def test_release_details_with_any_fence_publish_only_what_the_seed_reads_alike(
    fence: tuple[str, str], heading: str
) -> None:
    _check(_publish_release, "details", fragment(fence, heading))


def test_an_indented_fence_inside_a_longer_fence_is_kept_as_its_content(tmp_path: Path) -> None:
    store = _store(tmp_path)
    path = _publish_task(store, "goal", "Reply as given:\n\n````text\n1. step\n   ```bash\n   make\n   ```\n````")
    assert "   ```bash" in path.read_text()
    _same_sections(path.read_text())
    assert store.queries.status()[0].problems == ()


def test_a_captured_reply_with_an_indented_fence_is_captured_verbatim(tmp_path: Path) -> None:
    store = _store(tmp_path)
    ref = store.create_task(review()).ref
    reply = "Done:\n1. built it\n   ```\n   make\n   ```\n## not a section"
    stored = store.capture_report(ref, "completed", "codex exec call 7", reply)
    _same_sections(stored.path.read_text())
    assert captured_text(parse_report(stored.path.read_text())) == reply

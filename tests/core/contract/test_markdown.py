"""Markdown as the seed reads it; caches on whole texts keep only small ones."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from handoff_core.contract.frontmatter import split_frontmatter
from handoff_core.contract.markdown import CACHED_TEXT_LIMIT, body_lines, scan_fences, small_text_cache


def test_a_small_text_is_remembered_and_a_large_one_is_not() -> None:
    calls: list[int] = []

    @small_text_cache
    def measure(text: str) -> int:
        calls.append(len(text))
        return len(text)

    small, large = "a" * 10, "b" * (CACHED_TEXT_LIMIT + 1)
    assert [measure(small), measure(small), measure(large), measure(large)] == [10, 10, len(large), len(large)]
    assert calls == [10, len(large), len(large)]


def test_the_document_caches_hold_no_large_text_after_reading_one() -> None:
    large = "---\nschema_version: 1\n---\n\n## Goal\n" + "x" * (CACHED_TEXT_LIMIT * 2) + "\n"
    # small_text_cache sets cache_info on its wrapper at run time; the Callable it is typed as does not say so.
    before = (body_lines.cache_info().currsize, split_frontmatter.cache_info().currsize)  # type: ignore[attr-defined]
    body_lines(large)
    split_frontmatter(large)
    after = (body_lines.cache_info().currsize, split_frontmatter.cache_info().currsize)  # type: ignore[attr-defined]
    assert after == before


def test_a_fence_closed_by_a_longer_run_hides_the_lines_between() -> None:
    text = "a\n````\n## hidden\n`````\nb"
    assert [line for _, line in body_lines(text)] == ["a", "b"]


@given(
    st.lists(st.sampled_from(["## Goal", "```", "~~~~", " ```py", "text `x`", "~ ~", "", "    ```", "\r"]), max_size=12)
)
def test_the_fast_path_without_fence_runs_agrees_with_the_line_by_line_scan(parts: list[str]) -> None:
    text = "\n".join(parts)
    assert body_lines(text) == scan_fences(text)

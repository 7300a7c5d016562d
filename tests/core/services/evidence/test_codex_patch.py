"""Codex patches read as Codex reads them: headers trimmed, lines split on LF only, and the same
patches applied by the real ``codex`` binary touch exactly the paths read here."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from handoff_core.services.evidence.codex_patch import PatchRefused, codex_path, patch_paths

CODEX = Path(__file__).parents[3] / "clients" / "node_modules" / "@openai" / "codex-linux-x64"
# Characters Python's splitlines() breaks a line on and Codex does not (it splits on LF only).
PY_LINE_BREAKS = ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


def test_an_indented_header_names_its_file() -> None:
    patch = "*** Begin Patch\n*** Add File: a.txt\n+hi\n   *** Add File: b.txt\n+yo\n*** End Patch\n"
    assert patch_paths(patch) == ["a.txt", "b.txt"]


@pytest.mark.parametrize("sep", PY_LINE_BREAKS)
def test_a_path_holding_a_character_python_splits_lines_on_is_one_path(sep: str) -> None:
    patch = f"*** Begin Patch\n*** Add File: src/a1/x{sep}*** Add File: ../../escape.txt\n+hi\n*** End Patch\n"
    assert patch_paths(patch) == [f"src/a1/x{sep}*** Add File: ../../escape.txt"]


def test_a_move_is_read_untrimmed_on_the_line_after_its_update_and_both_sides_count() -> None:
    patch = "*** Begin Patch\n*** Update File: a.py\n*** Move to: b/c.py\n@@\n-x\n+y\n*** End Patch"
    assert patch_paths(patch) == ["a.py", "b/c.py"]


def test_crlf_lines_and_a_heredoc_wrapper_are_read_as_codex_reads_them() -> None:
    assert patch_paths("*** Begin Patch\r\n*** Delete File: gone.txt\r\n*** End Patch\r\n") == ["gone.txt"]
    assert patch_paths("<<'EOF'\n*** Begin Patch\n*** Delete File: d.txt\n*** End Patch\nEOF\n") == ["d.txt"]


@pytest.mark.parametrize(
    "patch",
    [
        "no patch",
        "*** Begin Patch\n*** Add File: a\n+x\n",
        "*** Begin Patch\n*** Frobnicate File: a\n*** End Patch",
        "*** Begin Patch\n*** Update File: a\n*** End Patch",
        "*** Begin Patch\n*** Update File: a\nnot a diff line\n*** End Patch",
    ],
)
def test_a_patch_codex_would_refuse_is_refused_whole(patch: str) -> None:
    with pytest.raises(PatchRefused):
        patch_paths(patch)


# -- the differential test: the real codex binary applies the same patches --------------------------------

_NAME = st.text(st.sampled_from(["a", "b", "z", " ", "\t", "\r", *PY_LINE_BREAKS]), min_size=1, max_size=4)
_INDENT = st.sampled_from(["", " ", "  ", "\t", "\u2003"])


@st.composite
def add_patches(draw: st.DrawFn) -> str:
    hunks = []
    for index in range(draw(st.integers(1, 3))):
        name = f"f{index}" + draw(_NAME) + "x"
        hunks.append(f"{draw(_INDENT)}*** Add File: {name}{draw(_INDENT)}\n+line {index}\n")
    return "*** Begin Patch\n" + "".join(hunks) + "*** End Patch\n"


def _tree(root: Path) -> dict[str, bytes]:
    return {
        os.path.relpath(os.path.join(folder, name), root): Path(folder, name).read_bytes()
        for folder, _, names in os.walk(root)
        for name in names
    }


def _codex() -> Path:
    found = list(CODEX.glob("vendor/*/bin/codex"))
    if not found:
        pytest.skip("the codex binary is not installed: run npm ci in tests/clients")
    return found[0]


@pytest.mark.slow
@settings(max_examples=40)
@given(patch=add_patches())
def test_the_real_codex_touches_exactly_the_paths_read_here(
    patch: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    scratch = tmp_path_factory.mktemp("codex-apply")
    (scratch / "kept.txt").write_text("kept\n")
    before = _tree(scratch)
    try:
        judged: list[str] | None = patch_paths(patch)
    except PatchRefused:
        judged = None
    done = subprocess.run(
        [str(_codex()), "--codex-run-as-apply-patch", patch], cwd=scratch, capture_output=True, timeout=60, check=False
    )
    after = _tree(scratch)
    touched = {path for path in before.keys() | after.keys() if before.get(path) != after.get(path)}
    if judged is None:
        assert done.returncode != 0
        assert touched == set()
    else:
        assert done.returncode == 0, done.stderr
        assert touched == {codex_path(path) for path in judged}

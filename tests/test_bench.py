"""The benchmark runs end to end (figures are read from its output, never asserted against targets here)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow  # the benchmark, in its own processes


def test_the_quick_benchmark_prints_a_table_and_writes_json(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    result = subprocess.run(
        [sys.executable, "-m", "bench", "--quick", "--only", "validator,history,scaling", "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    figures = json.loads(out.read_text())
    assert figures["machine"]["cpus"] >= 1
    assert figures["validator"]["handoff-validate"]["p50_ms"] > 0
    assert figures["history"]["hits"] == 5
    assert figures["scaling"]["1000"]["status"]["seconds_median"] > 0
    dispatch = figures["scaling"]["1000"]["dispatch"]
    assert {"steady_review_tree_p50_ms", "steady_implementation_tree_p50_ms", "steady_stat_floor_p50_ms"} <= set(
        dispatch
    )
    assert "handoff-validate (p50 ms)" in result.stdout


def test_the_evidence_section_measures_guard_and_audit_beside_their_floors(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    result = subprocess.run(
        [sys.executable, "-m", "bench", "--quick", "--only", "evidence", "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    figures = json.loads(out.read_text())["evidence"]
    assert figures["verdict"] == "passed"
    assert figures["files"] == 1000
    assert figures["guard_event"]["p50_ms"] > 0
    assert figures["git_diff_floor"]["p50_ms"] > 0
    assert "audit_task, 1000-file change" in result.stdout

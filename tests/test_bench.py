"""The benchmark runs end to end (figures are read from its output, never asserted against targets here).

It runs as from a plain install: the dev extras (pytest, hypothesis) and this test package are made
unimportable in the bench's process and in every process it starts.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench import targets
from bench.__main__ import SECTIONS
from bench.startup import commands, handshake
from bench.stats import FloorFailed

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow  # the benchmark, in its own processes

# Imported at start-up by every Python process that has this folder on PYTHONPATH.
BLOCKER = """
import sys
BLOCKED = ("tests", "pytest", "_pytest", "hypothesis")

class Blocked:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r} (a plain install)", name=name)
        return None

sys.meta_path.insert(0, Blocked)
"""


def plain_install_env(tmp_path: Path) -> dict[str, str]:
    """The environment of a plain install: the dev-only modules and ``tests`` cannot be imported."""
    site = tmp_path / "plain-site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(BLOCKER)
    path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, "XDG_CACHE_HOME": str(tmp_path / "cache")}


def assert_targets_measured(figures: dict[str, object], *sections: str) -> None:
    """Every target of the sections that ran is read from this run: a figure, its floor, a verdict."""
    rows = figures["targets"]
    assert isinstance(rows, list)
    measured = set(sections) & set(targets.SECTIONS)
    mine = [row for row in rows if row["section"] in measured]
    assert {row["section"] for row in mine} == measured
    unmeasured = [row["target"] for row in mine if row["met"] is None or not row["floor"]]
    assert not unmeasured


def bench(tmp_path: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bench", "--quick", *args],
        cwd=ROOT,
        env=plain_install_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_the_plain_install_blocker_refuses_the_test_package(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-c", "import tests.conftest"],
        cwd=ROOT,
        env=plain_install_env(tmp_path),
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode != 0
    assert "a plain install" in result.stderr


def test_the_quick_benchmark_prints_a_table_and_writes_json(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    result = bench(tmp_path, "--only", "validator,history,scaling", "--json", str(out))
    assert result.returncode == 0, result.stderr
    figures = json.loads(out.read_text())
    assert figures["machine"]["cpus"] >= 1
    assert figures["validator"]["handoff-validate_implementation"]["p50_ms"] > 0
    assert figures["history"]["hits"] == 5
    assert figures["scaling"]["1000"]["status"]["seconds_median"] > 0
    dispatch = figures["scaling"]["1000"]["dispatch"]
    assert {"steady_review_tree_p50_ms", "steady_implementation_tree_p50_ms", "steady_stat_floor_p50_ms"} <= set(
        dispatch
    )
    assert "handoff-validate return, implementation (p50 ms)" in result.stdout
    assert_targets_measured(figures, "validator", "scaling")
    assert "measured targets met" in result.stdout


def test_the_evidence_section_measures_guard_and_audit_beside_their_floors(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    result = bench(tmp_path, "--only", "evidence", "--json", str(out))
    assert result.returncode == 0, result.stderr
    run = json.loads(out.read_text())
    figures = run["evidence"]
    assert figures["guard_event"]["p50_ms"] > 0
    for size in ("1000", "10000"):
        audit = figures["audit"][size]
        assert audit["verdict"] == "passed"
        assert audit["files"] == int(size)
        assert audit["git_diff_floor"]["p50_ms"] > 0
        assert f"audit_task, {size}-file change" in result.stdout
    assert_targets_measured(run, "evidence")


@pytest.mark.parametrize("section", [s for s in SECTIONS if s not in ("validator", "history", "scaling", "evidence")])
def test_every_section_runs_quick_alone_from_a_plain_install(tmp_path: Path, section: str) -> None:
    out = tmp_path / "bench.json"
    result = bench(tmp_path, "--only", section, "--json", str(out))
    assert result.returncode == 0, result.stderr
    figures = json.loads(out.read_text())
    assert set(figures) == {"machine", "settings", "load", "targets", section}
    assert set(figures["load"]) == {section}
    assert figures[section]
    assert_targets_measured(figures, section)
    assert f"[{section}]" in result.stdout


def test_an_unknown_section_is_refused_with_the_known_ones(tmp_path: Path) -> None:
    result = bench(tmp_path, "--only", "validator,statuss", "--json", str(tmp_path / "bench.json"))
    assert result.returncode != 0
    assert "statuss" in result.stderr
    assert "validator" in result.stderr.split("statuss", 1)[1]
    assert not (tmp_path / "bench.json").exists()


def test_a_section_saves_its_figures_before_the_next_one_ends(tmp_path: Path) -> None:
    """A bench killed in its second section still leaves the first one's figures, whole."""
    out = tmp_path / "bench.json"
    command = [sys.executable, "-m", "bench", "--quick", "--only", "validator,scaling", "--json", str(out)]
    # Its own process group: the kill reaches the children it runs measurements in, too.
    env = plain_install_env(tmp_path)
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while not out.exists() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)  # a bounded wait for the first section's file
        assert process.poll() is None, "the bench ended before any figures were saved"
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
    figures = json.loads(out.read_text())
    assert figures["validator"]["handoff-validate_implementation"]["p50_ms"] > 0
    assert "scaling" not in figures


def test_the_hooks_section_fails_when_its_floor_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from bench import hooks

    monkeypatch.setattr(hooks, "FLOOR", "import sys\nsys.exit(1)\n")
    with pytest.raises(SystemExit, match="floor hook script failed"):
        hooks.run(tmp_path, 1)


def test_the_hooks_section_times_every_event_kind_beside_the_floor(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    result = bench(tmp_path, "--only", "hooks", "--json", str(out))
    assert result.returncode == 0, result.stderr
    figures = json.loads(out.read_text())["hooks"]
    kinds = {"pre_tool_allow", "pre_tool_deny", "post_tool", "stop", "console_pre_tool_deny"}
    assert set(figures["ratio_to_floor"]) == kinds
    runs = figures["floor"]["n"]
    assert all(figures["ratio_to_floor"][kind]["rounds"] == runs for kind in kinds)  # each paired with its round
    assert all(figures[kind]["p50_ms"] > 0 for kind in (*kinds, "floor"))
    assert "hook floor: python -I -S script reading the event" in result.stdout


def test_the_start_up_floor_answers_tools_list_from_its_own_folder(tmp_path: Path) -> None:
    """bench/http.py beside the minimal server must not shadow the standard ``http`` package in it."""
    answered = handshake(commands(tmp_path, tmp_path / "secret")["minimal"], tmp_path)
    assert 0 < answered.initialize <= answered.tools_list
    assert answered.size > 100  # one tool, its schema and description


def test_a_server_that_dies_before_tools_list_fails_the_bench(tmp_path: Path) -> None:
    with pytest.raises(FloorFailed, match="no tools/list"):
        handshake([sys.executable, "-c", "import sys; sys.exit(3)"], tmp_path)


def test_every_floor_of_a_quick_run_ran_to_its_end(tmp_path: Path) -> None:
    """Each ratio the bench prints divides by a floor that did its work, in the same round as its subject."""
    out = tmp_path / "bench.json"
    result = bench(tmp_path, "--only", "startup,validator,evidence", "--json", str(out))
    assert result.returncode == 0, result.stderr
    figures = json.loads(out.read_text())
    startup = figures["startup"]
    assert startup["tools_list_bytes"]["minimal"] > 100
    assert startup["ratio_lead"]["rounds"] == figures["settings"]["startup_runs"]
    assert startup["ratio_executor_initialize"]["rounds"] == figures["settings"]["startup_runs"]
    assert startup["initialize"]["minimal"]["p50_ms"] <= startup["minimal"]["p50_ms"]
    validator = figures["validator"]
    for floor in ("python_-I_-S_-c_pass", "python_-c_pass", "python_-c_import_yaml"):
        assert validator[floor]["n"] == figures["settings"]["validator_runs"]
    for case in ("review", "implementation", "implementation_signed"):
        for floor in ("yaml", "python -I -S"):
            assert validator[f"ratio_{case}"][floor]["rounds"] == figures["settings"]["validator_runs"]
    assert "pip's console script in a plain venv" in validator["command"]
    evidence = figures["evidence"]
    assert evidence["minimal_hook"]["n"] == evidence["guard_ratio"]["rounds"] > 0
    assert evidence["audit"], "no audit size was timed"
    for audited in evidence["audit"].values():  # each size's audit beside git diff of the same rounds
        ratio = audited["ratio"]
        assert ratio["min"] <= ratio["p50"] <= ratio["max"]
    assert "load average" in result.stdout


def test_the_status_floors_and_the_stdio_server_ran_in_a_quick_run(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    result = bench(tmp_path, "--only", "status", "--json", str(out))
    assert result.returncode == 0, result.stderr
    figures = json.loads(out.read_text())["status"]
    (size,) = (key for key in figures if key.isdigit())
    tree = figures[size]
    memory = tree["stdio"]["memory"]
    assert memory["empty_server_peak_rss_mb"] > 10  # the floor ran, in the same rounds as the warm server
    assert memory["kb_per_task"]["rounds"] == tree["stdio"]["call1"]["read_ratio"]["rounds"]
    assert memory["kb_per_task"]["min"] <= memory["kb_per_task"]["p50"] <= memory["kb_per_task"]["max"]
    assert tree["cold"]["read_ratio"]["rounds"] == tree["cold"]["bare_ratio"]["rounds"] > 0
    stdio = tree["stdio"]
    assert stdio["call1"]["read_ratio"]["rounds"] == stdio["call3"]["read_ratio"]["rounds"] > 0
    assert stdio["warm_unjudged"] == 0
    assert stdio["bytes"] > 1000  # a page of tasks, not an error
    assert "handoff_status over stdio" in result.stdout
    assert "KB/task" in result.stdout


def test_the_http_section_times_status_by_clients_beside_its_one_client_floor(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    result = bench(tmp_path, "--only", "http", "--json", str(out))
    assert result.returncode == 0, result.stderr
    (size,) = json.loads(out.read_text())["http"]["status_clients"].values()
    assert size["ratio_50_1"]["rounds"] == size["ratio_10_1"]["rounds"] == size["rounds"] >= 3
    assert all(size[clients]["cpu_ms_per_call_min"] > 0 for clients in ("1", "10", "50"))
    assert "50 vs 1 client" in result.stdout
    assert "target: flat (<= 1.2x)" in result.stdout


def test_a_status_client_process_that_ends_early_fails_the_bench() -> None:
    """A client process that exits (it could not reach the server, say) is refused, not divided by."""
    from bench.team_status import _expect

    with (
        subprocess.Popen([sys.executable, "-c", "pass"], stdout=subprocess.PIPE, text=True) as ended,
        pytest.raises(FloorFailed, match="a client process said '' \\(exit 0\\)"),
    ):
        _expect(ended, "ready")

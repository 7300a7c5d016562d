"""The targets table reads only the run it is printed in, and never calls a target met without its figure."""

from __future__ import annotations

from typing import Any

from bench import targets


def _run(**sections: Any) -> dict[str, Any]:
    settings = {"status_sizes": [10_000], "sizes": [100, 100_000]}
    return {"machine": {}, "settings": settings, **sections}


def _ratio(p50: float) -> dict[str, float]:
    return {"rounds": 3, "p50": p50, "min": p50 * 0.9, "max": p50 * 1.2}


def _standing(found: list[targets.Standing], starts: str) -> targets.Standing:
    (standing,) = (s for s in found if s.target.startswith(starts))
    return standing


def test_a_target_whose_section_did_not_run_is_not_measured_and_never_met() -> None:
    found = targets.standings(_run())
    assert {s.section for s in found} == set(targets.SECTIONS)
    assert all(s.met is None and s.figure == "not measured in this run" for s in found)
    assert targets.rows(found) == [
        f"-       the targets of {', '.join(targets.SECTIONS)}: not measured in this run",
        "0 of 0 measured targets met",
    ]


def test_the_dispatch_target_reads_the_largest_size_of_this_run() -> None:
    dispatch = {"steady_implementation_tree_p50_ms": 61.0, "steady_stat_floor_p50_ms": 240.0}
    small = {"steady_implementation_tree_p50_ms": 2.0, "steady_stat_floor_p50_ms": 1.0}
    scaling = {"100": {"dispatch": {**small, "steady_review_tree_p50_ms": 1.0}}}
    scaling["100000"] = {"dispatch": {**dispatch, "steady_review_tree_p50_ms": 1.5}}
    standing = _standing(targets.standings(_run(scaling=scaling)), "implementation create_task")
    assert "100,000" in standing.target
    assert standing.met is False
    assert "240.0" in standing.floor


def test_status_targets_compare_each_answer_with_the_read_walk_of_its_round() -> None:
    calls = {
        f"call{n}": {"seconds": s, "read_ratio": _ratio(r)} for n, s, r in ((1, 0.3, 3.8), (2, 0.2, 1.6), (3, 0.4, 3.2))
    }
    stdio = {**calls, "warm": {"seconds": 0.1, "read_ratio": _ratio(1.3)}, "read_seconds": 0.12}
    memory = {"server_peak_rss_mb": 80.0, "empty_server_peak_rss_mb": 73.0, "kb_per_task": _ratio(0.72)}
    status = {"10000": {"stdio": {**stdio, "memory": memory}}}
    found = targets.standings(_run(status=status))
    assert _standing(found, "status over stdio, the first answer ever (an empty cache) @ 10,000 <= 4.0x").met is True
    assert _standing(found, "status over stdio, warm @ 10,000").met is False
    assert _standing(found, "status over stdio @ 10,000: calls 2 and 3").met is False  # call 3 slower than call 1
    standing = _standing(found, "warm server memory @ 10,000")
    assert standing.met is True  # 7 MB over 10,000 tasks: 0.72 KB a task, the median of its rounds
    assert "0.72 KB/task (rounds 0.65-0.86)" in standing.figure
    assert "73.0 MB" in standing.floor


def test_a_missed_target_is_printed_as_missed_beside_its_floor() -> None:
    node = {"p50_ms": 60.0}
    validator = {
        "node_-e_empty": node,
        "handoff-validate_implementation": {"p50_ms": 30.0},
        "handoff-validate_implementation_signed": {"p50_ms": 45.0},
        "ratio_implementation": {"node": _ratio(0.5)},
        "ratio_implementation_signed": {"node": _ratio(0.75)},
    }
    found = targets.standings(_run(validator=validator))
    lines = targets.rows(found)
    (signed,) = (line for line in lines if "signed" in line)
    assert signed.startswith("MISSED")
    assert "node's bare start 60.0 ms" in signed
    assert lines[-1] == "1 of 2 measured targets met"
    # the one missed is what fails a --targets run; one not measured here fails nothing
    assert targets.missed(found) == ["handoff-validate, implementation signed return <= 0.6x the seed"]


def test_the_team_cpu_target_reads_each_size_against_one_client_of_the_same_rounds() -> None:
    at = {n: {"cpu_ms_per_call_p50": ms} for n, ms in (("1", 10.0), ("10", 9.0), ("50", 13.0))}
    sizes = {"100": {**at, "ratio_50_1": {"rounds": 3, "p50": 1.3, "min": 1.1, "max": 1.5}}}
    sizes["1000"] = {**at, "ratio_50_1": {"rounds": 3, "p50": 0.9, "min": 0.8, "max": 1.25}}
    found = targets.standings(_run(http={"status_clients": sizes}))
    team = {s.target: s for s in found if s.section == "http"}
    assert team["team server CPU per status call @ 100 tasks, 50 clients <= 1.2x 1 client"].met is False
    assert team["team server CPU per status call @ 1,000 tasks, 50 clients <= 1.2x 1 client"].met is True
    assert all("1 client 10.0 ms/call" in s.floor for s in team.values())


def test_memory_is_judged_at_the_largest_tree_of_the_run_alone() -> None:
    """Per task at 10,000 a server's fixed costs still weigh; the target is the issue's, at the largest tree."""
    stdio = {"read_seconds": 1.0, "warm": {"seconds": 0.5, "read_ratio": _ratio(0.5)}}
    stdio |= {f"call{n}": {"seconds": 1.0, "read_ratio": _ratio(1.0)} for n in (1, 2, 3)}

    def tree(kb: float) -> dict[str, Any]:
        memory = {"server_peak_rss_mb": 90.0, "empty_server_peak_rss_mb": 73.0, "kb_per_task": _ratio(kb)}
        return {"stdio": {**stdio, "memory": memory}}

    run = _run(status={"10000": tree(1.3), "100000": tree(0.9)})
    run["settings"]["status_sizes"] = [10_000, 100_000]
    memory = [s for s in targets.standings(run) if s.target.startswith("warm server memory")]
    assert [(s.target.split(" @ ")[1].split(" ")[0], s.met) for s in memory] == [("100,000", True)]


def test_start_up_is_checked_against_the_minimal_server_to_each_answer_and_a_slow_one_is_missed() -> None:
    def answered(lead: float, executor: float, minimal: float) -> dict[str, Any]:
        return {
            name: {"p50_ms": ms, "min_ms": ms}
            for name, ms in (("lead", lead), ("executor", executor), ("minimal", minimal))
        }

    startup = {**answered(760.0, 700.0, 660.0), "initialize": answered(700.0, 690.0, 650.0)}
    startup |= {"ratio_lead": _ratio(1.2), "ratio_executor": _ratio(1.06), "tools_list_bytes": {"minimal": 324}}
    startup |= {"ratio_lead_initialize": _ratio(1.1), "ratio_executor_initialize": _ratio(1.16)}
    found = {s.target: s for s in targets.standings(_run(startup=startup)) if s.section == "startup"}
    met = {target.split(" <= ")[0]: s.met for target, s in found.items()}
    assert met == {
        "lead server start-up to its initialize answer": True,
        "executor server start-up to its initialize answer": False,
        "lead server start-up to its tools/list answer": False,
        "executor server start-up to its tools/list answer": True,
    }
    lead = found[f"lead server start-up to its tools/list answer <= {targets.STARTUP_RATIO}x a minimal MCPServer"]
    assert lead.figure == "760.0 ms, 1.20x (rounds 1.08-1.44)"
    assert "minimal p50 660.0 ms" in lead.floor
    assert any(
        line.startswith("MISSED  lead server start-up to its tools/list") for line in targets.rows(list(found.values()))
    )


def test_the_remote_guard_targets_read_the_lean_hook_over_the_minimal_hook_of_the_same_rounds() -> None:
    remote = {
        "lean_asks_server": {"p50_ms": 31.0},
        "lean_cached": {"p50_ms": 22.0},
        "minimal_hook": {"p50_ms": 13.0},
        "lean_asks_ratio": _ratio(2.4),
        "lean_cached_ratio": _ratio(1.7),
    }
    found = targets.standings(_run(remote=remote))
    asking = _standing(found, "guard --url per hook event, asking the team server")
    cached = _standing(found, "guard --url per hook event, from its cache")
    assert (asking.met, cached.met) == (False, True)  # 2.4x is over the 2x limit; 1.7x is under it
    assert asking.figure == "31.0 ms, 2.40x (rounds 2.16-2.88)"
    assert cached.floor == "minimal hook p50 13.0 ms"
    assert targets.missed(found) == [asking.target]


def test_a_remote_section_without_the_lean_figures_measures_no_remote_target() -> None:
    found = targets.standings(_run(remote={"guard_cached": {"p50_ms": 60.0}}))
    remote = [s for s in found if s.section == "remote"]
    assert len(remote) == 2
    assert all(s.met is None for s in remote)


def test_a_restarted_servers_first_dispatch_is_met_only_without_inotify_watches() -> None:
    steady = {"steady_implementation_tree_p50_ms": 20.0, "steady_stat_floor_p50_ms": 240.0}
    first = {
        "server_first_fresh_cache_ms": 9000.0,
        "server_first_read_walk_ms": 2000.0,
        "server_first_fresh_over_read_walk": _ratio(4.5),
        "server_first_restarted_ms": 400.0,
    }
    for watches, met in ((0, True), (3, False)):
        dispatch = {**steady, "steady_review_tree_p50_ms": 1.5, **first, "server_first_inotify_watches": watches}
        found = targets.standings(_run(scaling={"100000": {"dispatch": dispatch}}))
        standing = _standing(found, "a restarted server's first implementation create_task @ 100,000")
        assert standing.met is met
        assert standing.figure == f"400.0 ms, {watches} inotify watches"
        assert "240.0 ms" in standing.floor
        first_ever = _standing(found, "the first server ever on a tree (no claim rows)")
        assert first_ever.met is False  # 4.5x is over the read walk's 4x
        assert first_ever.figure.startswith("9000.0 ms (over 1000 ms), 4.50x")
    dispatch = {**steady, "steady_review_tree_p50_ms": 1.5}
    found = targets.standings(_run(scaling={"100000": {"dispatch": dispatch}}))
    assert _standing(found, "a restarted server's first").met is None
    assert _standing(found, "the first server ever on a tree").met is None


def test_the_first_server_ever_on_a_tree_is_read_against_a_read_walk_of_the_same_rounds_with_the_second_beside() -> (
    None
):
    dispatch = {
        "steady_implementation_tree_p50_ms": 20.0,
        "steady_stat_floor_p50_ms": 240.0,
        "steady_review_tree_p50_ms": 1.5,
        "server_first_restarted_ms": 40.0,
        "server_first_inotify_watches": 0,
    }
    found = targets.standings(_run(scaling={"100000": {"dispatch": dispatch}}))
    assert _standing(found, "the first server ever on a tree").met is None  # a run with no read walk beside it
    figures = {"server_first_fresh_cache_ms": 5200.0, "server_first_read_walk_ms": 2600.0}
    found = targets.standings(
        _run(
            scaling={"100000": {"dispatch": {**dispatch, **figures, "server_first_fresh_over_read_walk": _ratio(2.0)}}}
        )
    )
    first_ever = _standing(found, "the first server ever on a tree (no claim rows)")
    assert first_ever.target.endswith("<= 4.0x read walk, no watches")
    assert first_ever.met is True  # over the second, yet within 4x the walk every first dispatch must make
    assert first_ever.figure.startswith("5200.0 ms (over 1000 ms), 2.00x")
    assert first_ever.floor == "read walk 2600.0 ms, same rounds"


def test_each_audit_target_reads_its_size_beside_the_git_diff_of_the_same_rounds() -> None:
    def audit(ratio: float) -> dict[str, Any]:
        return {"audit_task": {"p50_ms": 9.0}, "git_diff_floor": {"p50_ms": 3.0}, "first_audit_ms": 20.0,
                "ratio": _ratio(ratio)}  # fmt: skip

    found = targets.standings(_run(evidence={"audit": {"1000": audit(2.9), "10000": audit(3.4)}}))
    small, large = _standing(found, "audit_task of a 1,000"), _standing(found, "audit_task of a 10,000")
    assert small.met is True
    assert large.met is False
    assert "git diff p50 3.0 ms" in large.floor
    assert "first audit 20.0 ms" in large.figure


def test_a_restarted_servers_first_status_is_read_against_its_own_warm_answer() -> None:
    stdio = {"read_seconds": 0.1, "warm": {"seconds": 0.1, "read_ratio": _ratio(1.0)}}
    stdio |= {f"call{n}": {"seconds": 0.3, "read_ratio": _ratio(3.0)} for n in (1, 2, 3)}
    for ratio, met in ((1.15, True), (2.5, False)):
        restarted = {"seconds": 0.12, "warm_seconds": 0.1, "warm_ratio": _ratio(ratio), "unjudged": 0}
        found = targets.standings(_run(status={"10000": {"stdio": {**stdio, "restarted": restarted}}}))
        standing = _standing(found, "status over stdio, a restarted server's first answer @ 10,000 <= 1.2x warm")
        assert standing.met is met
        assert standing.floor == "warm answer of the same server 0.1 s"
    found = targets.standings(_run(status={"10000": {"stdio": stdio}}))
    assert _standing(found, "status over stdio, a restarted server's first answer").met is None

"""The benchmark's printed table, with each figure beside its target."""

from __future__ import annotations

from typing import Any

from bench.stats import spread
from bench.targets import STARTUP_RATIO
from server.config import TOOLS_LIST_BUDGET

TARGETS = {
    "mcp overhead p50": "<= 1 ms",
    "create_task p50": "<= 5 ms",
    "status 10k": "issue: <= 0.5 s at 10,000 (fresh process)",
    "status warm 10k": "issue: <= 100 ms at 10,000",
    "status warm 100k": "issue: <= 1 s at 100,000",
    "first dispatch 10k": "issue: <= 100 ms at 10,000",
    "steady dispatch": "issue: tree <= 1.2x empty, <= 2 ms",
    "implementation dispatch 100k": "issue: <= 50 ms at 100,000 active tasks",
    "handoff-validate": "<= 80 ms; issue: <= 1.3x floor",
    "handoff-validate return": "<= 0.6x seed (the ratio to node bounds it above)",
    "tools/list bytes": f"lead <= {TOOLS_LIST_BUDGET['lead']}, executor <= {TOOLS_LIST_BUDGET['executor']}",
    "search_history 50 MB": "<= 1 s, bounded memory",
    "http p50": "HTTP p50 <= 2x stdio",
    "status clients": "target: flat (<= 1.2x)",
    "board paint": "<= 1 s at 10,000 tasks",
    "initialize flooded": "issue: <= 2x idle, at 3,000 and 30,000 tasks",
    "trickling held": "issue: 0 of 1,000 past the header deadline",
    "deep nesting": "issue: answered within 1 s",
}


STATUS_TARGETS = {
    "cold": "issue 26: <= 3x read walk at 10k, 100k",
    "warm": "<= 1x bare walk",
    "stdio": "issue 33: call 1 <= 2.5x read walk; 2, 3 never slower than 1",
    "stdio warm": "issue 33: <= 1.2x read walk",
    "memory": "issue 33: <= 1 KB/task warm at 100k (default settings)",
}


def _row(label: str, value: str, target: str = "") -> str:
    return f"{label:<44} {value:<48} {target}"


def _startup(s: dict[str, Any]) -> list[str]:
    rows = []
    for answer, figures in (("initialize", s["initialize"]), ("tools/list", s)):
        rows += [
            _row(f"start-up to {answer}, {name} (min / p50 ms)", f"{figures[key]['min_ms']} / {figures[key]['p50_ms']}")
            for name, key in (("lead", "lead"), ("executor", "executor"), ("minimal floor", "minimal"))
        ]
    for answer, suffix in (("initialize", "_initialize"), ("tools/list", "")):
        rows.append(
            _row(
                f"startup ratio to {answer} (lead, executor)",
                f"lead {spread(s['ratio_lead' + suffix])}, executor {spread(s['ratio_executor' + suffix])}",
                f"<= {STARTUP_RATIO}",
            )
        )
    sizes = s["tools_list_bytes"]
    rows.append(
        _row("tools/list bytes", f"lead {sizes['lead']}, executor {sizes['executor']}", TARGETS["tools/list bytes"])
    )
    return rows


def _latency(s: dict[str, Any]) -> list[str]:
    rows = []
    for name in s["core"]:
        memory, stdio, core = s["in_memory"][name], s["stdio"][name], s["core"][name]
        value = (
            f"mem {memory['p50_ms']}/{memory['p95_ms']}  stdio {stdio['p50_ms']}/{stdio['p95_ms']}  "
            f"core {core['p50_ms']}/{core['p95_ms']}"
        )
        target = TARGETS["create_task p50"] if name == "create_task" else ""
        rows.append(_row(f"{name} p50/p95 ms", value, target))
    overhead = ", ".join(f"{k} {v}" for k, v in s["mcp_overhead_p50_ms"].items())
    rows.append(_row("mcp overhead p50 ms (memory - core)", overhead, TARGETS["mcp overhead p50"]))
    check = s.get("client_output_check_p50_ms", {}).get("handoff_status")
    if check is not None:
        rows.append(_row("  of which SDK client output-schema check", f"handoff_status {check} ms"))
    return rows


def _validator(s: dict[str, Any]) -> list[str]:
    seed = s["seed_validate-handoff.mjs"]
    rows = [
        _row("command timed", s["command"]),
        _row("python -I -S -c pass (p50 ms, the interpreter)", str(s["python_-I_-S_-c_pass"]["p50_ms"])),
        _row("python -c pass (p50 ms, with site)", str(s["python_-c_pass"]["p50_ms"])),
        _row("python -c 'import yaml' (p50 ms)", str(s["python_-c_import_yaml"]["p50_ms"])),
    ]
    if "node_-e_empty" in s:
        rows.append(_row("node -e '' (p50 ms, a lower bound of the seed)", str(s["node_-e_empty"]["p50_ms"])))
    rows.append(_row("seed validate-handoff.mjs (p50 ms)", str(seed["p50_ms"]) if isinstance(seed, dict) else seed))
    for case in ("review", "implementation", "implementation_signed"):
        ratios = s[f"ratio_{case}"]
        value = f"{s[f'handoff-validate_{case}']['p50_ms']}"
        value += "".join(f"; {spread(ratios[k])} {k}" for k in ("node", "seed", "python -I -S", "yaml") if k in ratios)
        target = TARGETS["handoff-validate"] if case == "review" else TARGETS["handoff-validate return"]
        rows.append(_row(f"handoff-validate return, {case.replace('_', ' ')} (p50 ms)", value, target))
    return rows


def _status_cell(what: str, f: dict[str, Any]) -> str:
    if what != "status_warm":
        return f"{f['seconds_median']} s, peak {f['peak_rss_mb']} MB"
    ratio = f["seconds_median"] / f["floor_seconds_median"]
    held = f"held {f['held_of_tasks']}"
    return f"{f['seconds_median']} s, floor {f['floor_seconds_median']} s ({ratio:.1f}x), {held}"


def _status_target(what: str, size: str) -> str:
    if size == "10000":
        key = {"status": "status 10k", "status_warm": "status warm 10k"}.get(what)
        return TARGETS[key] if key else ""
    return TARGETS["status warm 100k"] if (size, what) == ("100000", "status_warm") else ""


def _dispatch_rows(size: str, d: dict[str, Any]) -> list[str]:
    first = f"review {d['first_review_ms']} ms; implementation {d['first_implementation_ms']} ms"
    target = TARGETS["first dispatch 10k"] if size == "10000" else ""
    return [
        _row(f"first dispatch @ {size} tasks", first, target),
        *_steady_rows(f"create_task p50 @ {size} tasks", d, "steady"),
        *(
            _steady_rows(f"create_task p50 @ {size} tasks archived", d, "steady_archived")
            if "steady_archived_floor_p50_ms" in d
            else []
        ),
        *_implementation_rows(size, d),
    ]


def _implementation_rows(size: str, d: dict[str, Any]) -> list[str]:
    """The implementation dispatch of a server beside its floors from the same rounds."""
    if "steady_implementation_over_stat_floor" not in d:
        return []
    low, high = d["steady_implementation_tree_range_ms"]
    value = (
        f"{d['steady_implementation_tree_p50_ms']} ms (rounds {low}-{high}); floors: a stat of each task "
        f"{d['steady_stat_floor_p50_ms']} ms, review {d['steady_review_tree_p50_ms']} ms; "
        f"{spread(d['steady_implementation_over_stat_floor'])} stat floor, "
        f"{spread(d['steady_implementation_over_review'])} review; a server's first "
        f"{d['steady_first_server_implementation_tree_ms']} ms"
    )
    if "server_first_restarted_ms" in d:
        value += (
            f"; restarted from its claim rows {d['server_first_restarted_ms']} ms "
            f"({d['server_first_inotify_watches']} inotify watches), with no rows {d['server_first_fresh_cache_ms']} ms"
        )
    if "server_first_fresh_over_read_walk" in d:
        value += f" ({spread(d['server_first_fresh_over_read_walk'])} a read walk, {d['server_first_read_walk_ms']} ms)"
    target = TARGETS["implementation dispatch 100k"] if size == "100000" else ""
    label = f"implementation create_task p50 @ {size} active tasks (server)"
    return [_row(label, value, target), *_token_rows(size, d)]


def _token_rows(size: str, d: dict[str, Any]) -> list[str]:
    """A team server's token index at start, restarted and first ever, beside the same rounds' read walk."""
    if "token_index_restarted_ms" not in d:
        return []
    value = (
        f"restarted from its rows {d['token_index_restarted_ms']} ms "
        f"({spread(d['token_index_restarted_over_read_walk'])} a read walk, {d['server_first_read_walk_ms']} ms); "
        f"the first ever (no rows) {d['token_index_first_ms']} ms"
    )
    return [_row(f"team server's token index @ {size} tasks, at start", value)]


def _steady_rows(label: str, d: dict[str, Any], prefix: str) -> list[str]:
    """Each kind beside an empty tree; what an implementation dispatch adds, beside a stat per task."""
    rows = []
    for kind in ("review", "implementation"):
        tree, empty = d[f"{prefix}_{kind}_tree_p50_ms"], d[f"{prefix}_{kind}_empty_p50_ms"]
        value = f"{kind} {tree}, empty {empty} ({tree / empty:.2f}x)"
        stat_floor = d[f"{prefix}_stat_floor_p50_ms"]
        if kind == "implementation" and stat_floor > 0.05:
            value += f"; +{tree - empty:.2f} = {(tree - empty) / stat_floor:.2f}x stat floor {stat_floor}"
        rows.append(
            _row(label if kind == "review" else "", value, TARGETS["steady dispatch"] if kind == "review" else "")
        )
    rows.append(_row("", f"durable-create floor {d[f'{prefix}_floor_p50_ms']} ms"))
    return rows


def _scaling(s: dict[str, Any]) -> list[str]:
    rows = []
    for size, figures in s.items():
        if not isinstance(figures, dict):
            rows.append(_row(size, str(figures)))
            continue
        for what, f in figures.items():
            if what == "dispatch":
                rows += _dispatch_rows(size, f)
            else:
                rows.append(_row(f"{what} @ {size} tasks", _status_cell(what, f), _status_target(what, size)))
    return rows


def _status_row(size: str, what: str, f: dict[str, Any]) -> str:
    read, bare = spread(f["read_ratio"]), spread(f["bare_ratio"])
    value = (
        f"{f['seconds']} s = {read} read walk, {bare} bare walk; {f['bytes']} B;"
        f" unjudged {f['unjudged']}; peak {f['peak_rss_mb']} MB"
    )
    return _row(f"handoff_status {what} @ {size} tasks", value, STATUS_TARGETS.get(what, ""))


def _status(s: dict[str, Any]) -> list[str]:
    rows = []
    for size, figures in s.items():
        if not isinstance(figures, dict):
            continue
        if "cold" in figures:  # not in a --targets run: it reads the stdio rows alone
            floors = figures["cold"]
            bare, read = floors["bare_seconds"], floors["read_seconds"]
            rows.append(_row(f"floors @ {size} tasks", f"bare walk {bare} s, read walk {read} s"))
            rows += [_status_row(size, what, figures[what]) for what in ("cold", "warm")]
        rows += _stdio_rows(size, "stdio", figures["stdio"])
    return rows


def _stdio_rows(size: str, how: str, f: dict[str, Any]) -> list[str]:
    """A fresh stdio server's first three answers and its warm one, each beside the read walk of its round."""
    calls = "; ".join(f"{f[f'call{n}']['seconds']} s {spread(f[f'call{n}']['read_ratio'])}" for n in (1, 2, 3))
    warm = f"{f['warm']['seconds']} s {spread(f['warm']['read_ratio'])}"
    memory = f["memory"]
    per_task = memory["kb_per_task"]
    kb = f"{per_task['p50']:.2f} KB/task (rounds {per_task['min']:.2f}-{per_task['max']:.2f})"
    return [
        _row(f"handoff_status over {how} @ {size}: calls 1, 2, 3", calls, STATUS_TARGETS["stdio"]),
        _row("", f"warm {warm}; read walk {f['read_seconds']} s", STATUS_TARGETS["stdio warm"]),
        _row(
            "",
            f"reply {f['bytes']} B on the wire; warm server peak {memory['server_peak_rss_mb']} MB,"
            f" empty-tree server {memory['empty_server_peak_rss_mb']} MB (floor): {kb}",
            STATUS_TARGETS["memory"],
        ),
    ]


def _contention(s: dict[str, Any]) -> list[str]:
    return [
        _row(f"create_task x{n} processes", f"{f['tasks']} tasks in {f['seconds']} s = {f['tasks_per_second']}/s")
        for n, f in s.items()
    ]


def _history(s: dict[str, Any]) -> list[str]:
    value = f"{s['seconds_min']} s (max {s['seconds_max']}), peak {s['peak_rss_mb']} MB, {s['hits']} hits"
    return [_row(f"search_history on {s['log_mb']} MB log", value, TARGETS["search_history 50 MB"])]


def _http(s: dict[str, Any]) -> list[str]:
    rows = []
    for name in ("read", "write"):
        over_http, over_stdio = s[f"http_{name}"], s[f"stdio_{name}"]
        value = (
            f"http {over_http['p50_ms']}/{over_http['p95_ms']}  stdio {over_stdio['p50_ms']}/{over_stdio['p95_ms']}  "
            f"ratio {spread(s['ratio'][name])}"
        )
        rows.append(
            _row(
                f"{'read_task' if name == 'read' else 'write_report'} http vs stdio p50/p95 ms",
                value,
                TARGETS["http p50"],
            )
        )
    fifty = s["fifty_sessions"]
    rows.append(
        _row(
            "50 executor sessions at once",
            f"{fifty['sessions']} reports in {fifty['seconds']} s = {fifty['reports_per_s']}/s",
        )
    )
    return rows + _status_clients(s.get("status_clients", {}))


def _status_clients(sizes: dict[str, Any]) -> list[str]:
    """The team server's CPU per handoff_status call at 1, 10 and 50 clients, and 50 over 1."""
    rows = []
    for size, f in sizes.items():
        cpu = " / ".join(str(f[n]["cpu_ms_per_call_p50"]) for n in ("1", "10", "50"))
        rate = " / ".join(str(f[n]["calls_per_s_p50"]) for n in ("1", "10", "50"))
        label = f"status CPU/call, team, {size} tasks"
        rows.append(_row(f"{label}, 1/10/50 clients", f"{cpu} ms; {rate} calls/s"))
        rows.append(_row(f"{label}, 50 vs 1 client", spread(f["ratio_50_1"]), TARGETS["status clients"]))
    return rows


def _board(s: dict[str, Any]) -> list[str]:
    if "skipped" in s:
        return [_row("board first paint", s["skipped"])]
    floor = s["0"]["paint_p50_s"]
    rows = [_row("board first paint, empty tree (floor)", f"{floor} s")]
    for size, figures in s.items():
        if size != "0":
            ratio = round(figures["paint_p50_s"] / floor, 2)
            value = f"{figures['paint_p50_s']} s ({ratio}x floor), judged in {figures['judge_s']} s"
            rows.append(_row(f"board first paint @ {size} tasks", value, TARGETS["board paint"]))
    return rows


def _exchange(s: dict[str, Any]) -> list[str]:
    def cell(name: str) -> str:
        return f"{s[name]['seconds_min']} s, peak {s[name]['peak_rss_mb']} MB"

    return [
        _row(f"package {s['files']} small files", f"{cell('package')} (floor, reading them: {cell('read-floor')})"),
        _row(
            f"check a {s['entries']}-entry return ({s['archive_mb']} MB)",
            f"{cell('check')} (floor, zipfile listing: {cell('list-floor')})",
            "reads no entry beyond 512 B",
        ),
        _row(
            f"judge a return at its policy's limits ({s['limit_mb']} MB of text)",
            f"median {s['judge']['seconds_median']} s, peak {s['judge']['peak_rss_mb']} MB "
            f"(floor, check and decompress alone: {s['read-floor-return']['seconds_median']} s; "
            f"{s['judge']['seconds_median'] / max(s['read-floor-return']['seconds_median'], 1e-9):.0f}x)",
            "the secret scan of every line is the difference",
        ),
    ]


def _evidence(s: dict[str, Any]) -> list[str]:
    return [
        _row(
            "guard per hook event (p50 ms)",
            f"{s['guard_event']['p50_ms']} (floor, minimal hook under python -I -S: "
            f"{s['minimal_hook']['p50_ms']}; {spread(s['guard_ratio'])})",
            "a fresh process per write, as the CLIs run it",
        ),
        *(
            _row(
                f"audit_task, {a['files']}-file change (p50 ms)",
                f"{a['audit_task']['p50_ms']} (floor, git diff --name-status: {a['git_diff_floor']['p50_ms']}; "
                f"{spread(a['ratio'])}; first audit {a['first_audit_ms']}) {a['verdict']}",
            )
            for a in s["audit"].values()
        ),
        _row(
            "proof of one signed REPORT (p50 ms)",
            f"{s['proof_verify']['p50_ms']} (floor, its sha256: {s['sha256_floor']['p50_ms']})",
            "paid once per judgement; the verdict cache keeps it",
        ),
    ]


def _remote(s: dict[str, Any]) -> list[str]:
    floor = s["python_-c_pass"]["p50_ms"]
    return [
        _row(
            "guard elsewhere, asking the team server (p50 ms)",
            f"{s['guard_asks_server']['p50_ms']} (floor, python -c pass: {floor}; x{s['asks_ratio']}; "
            f"minimal hook {spread(s['printed_asks_ratio'])}) {s['guard_decision']}",
            "once per session: the TASK is cached",
        ),
        _row(
            "guard elsewhere, from its cache (p50 ms)",
            f"{s['guard_cached']['p50_ms']} (floor {floor}; x{s['cached_ratio']}; "
            f"minimal hook {spread(s['printed_cached_ratio'])})",
        ),
        _row(
            "guard elsewhere, lean entry, asking (p50 ms)",
            f"{s['lean_asks_server']['p50_ms']} (floor, minimal hook: {s['minimal_hook']['p50_ms']}; "
            f"{spread(s['lean_asks_ratio'])})",
            "python -I -S hook_process.py --url",
        ),
        _row(
            "guard elsewhere, lean entry, cached (p50 ms)",
            f"{s['lean_cached']['p50_ms']} (floor {s['minimal_hook']['p50_ms']}; {spread(s['lean_cached_ratio'])})",
        ),
        _row(
            "audit_task through the git remote (p50 ms)",
            f"{s['audit_task_fetching']['p50_ms']} (floor, git fetch + diff: "
            f"{s['git_fetch_and_diff_floor']['p50_ms']}; x{s['audit_ratio']}) {s['audit_verdict']}",
        ),
    ]


def _hooks(s: dict[str, Any]) -> list[str]:
    floor = s["floor"]["p50_ms"]
    rows = [_row("hook floor: python -I -S script reading the event (p50 ms)", f"{floor}", "the same interpreter")]
    for name, ratio in s["ratio_to_floor"].items():
        value = f"{s[name]['p50_ms']} (p95 {s[name]['p95_ms']}; {spread(ratio)} the floor)"
        rows.append(_row(f"hook {name.replace('_', ' ')} (p50 ms)", value, f"<= x{s['target_ratio']} the floor"))
    return rows


def _sandbox(s: dict[str, Any]) -> list[str]:
    if "skipped" in s:
        return [_row("sandbox", s["skipped"])]
    added = s["added_ms"]
    return [
        _row(
            "bare exec floor: python -I -S exec of /bin/true (p50 ms)",
            f"{s['floor']['p50_ms']}",
            "the same interpreter",
        ),
        _row(
            f"sandboxed launch of /bin/true, Landlock ABI {s['abi']} (p50 ms)",
            f"{s['sandbox']['p50_ms']} (+{added['p50']} ms, rounds {added['min']} to {added['max']})",
            f"<= +{s['target_added_ms']:g} ms",
        ),
    ]


def _verify(s: dict[str, Any]) -> list[str]:
    if "skipped" in s:
        return [_row("verify", s["skipped"])]
    added = s["added_ms"]
    return [
        _row(f"the {s['checks']} checks run directly in the worktree (p50 ms)", f"{s['direct']['p50_ms']}", "floor"),
        _row(
            f"verify_task replaying them, Landlock ABI {s['abi']} (p50 ms)",
            f"{s['replay']['p50_ms']} (+{added['p50']} ms, rounds {added['min']} to {added['max']}; "
            f"{spread(s['ratio_to_direct'])} the floor)",
        ),
    ]


def _tokens(s: dict[str, Any]) -> list[str]:
    rows = []
    for size, t in s.items():
        idle, flooded = t["idle"], t["flooded"]
        rows.append(
            _row(f"executor initialize idle @ {size} (floor)", f"p50 {idle['p50_ms']} ms, p95 {idle['p95_ms']}")
        )
        value = f"p50 {flooded['p50_ms']} ms ({t['ratio_p50']}x), answers {t['flood_answers']}"
        rows.append(_row(f"initialize, 20 bad-token clients @ {size}", value, TARGETS["initialize flooded"]))
        trickle = t["trickle"]
        held = f"{trickle['still_open']} of {trickle['opened']} open after {trickle['open_after_s']} s"
        rows.append(_row(f"trickling connections @ {size}", held, TARGETS["trickling held"]))
        deep = ", ".join(f"{depth} deep {ms} ms" for depth, ms in t["deep_nesting_answered_ms"].items())
        rows.append(_row(f"deep nesting answered @ {size}", deep, TARGETS["deep nesting"]))
    return rows


def _load(load: dict[str, list[float]] | None) -> list[str]:
    """The machine's load around a section: on a shared machine, what every figure below is read against."""
    if load is None:
        return []
    before, after = ("/".join(str(v) for v in load[when]) for when in ("before", "after"))
    return [_row("load average (1/5/15 min) before, after", f"{before}, {after}")]


def render(results: dict[str, Any]) -> str:
    m = results["machine"]
    lines = [f"handoff-mcp bench · Python {m['python']} ({m['executable']}) · {m['cpus']} CPUs", ""]
    for key, fn in (
        ("startup", _startup),
        ("latency", _latency),
        ("validator", _validator),
        ("status", _status),
        ("scaling", _scaling),
        ("contention", _contention),
        ("history", _history),
        ("http", _http),
        ("board", _board),
        ("exchange", _exchange),
        ("evidence", _evidence),
        ("remote", _remote),
        ("hooks", _hooks),
        ("sandbox", _sandbox),
        ("verify", _verify),
        ("tokens", _tokens),
    ):
        if key in results:
            lines += [f"[{key}]", *_load(results.get("load", {}).get(key)), *fn(results[key]), ""]
    return "\n".join(lines)

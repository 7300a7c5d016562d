"""The performance targets, each read from the figures of the run it is printed in, beside its floor.

One home for what each target is: which section measures it, which figure is the subject, which
is the floor it is read against, and the limit. ``python -m bench --targets`` runs exactly the
sections these need, at the sizes they name (10,000 and 100,000 tasks), and prints this table
last; every run prints it for the sizes it ran, each row naming its size. A target whose section
did not run says "not measured in this run": no figure is ever carried over from another run. A
missed target is printed as missed; with ``--targets`` the run then exits 1, as it does when a
*floor* fails (``stats.FloorFailed``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from typing import Any

from bench.stats import spread

SECTIONS = ("startup", "validator", "status", "scaling", "hooks", "remote", "sandbox", "http", "evidence")
STATUS_SIZES = (10_000, 100_000)
DISPATCH_SIZE = 100_000
STARTUP_RATIO = 1.15  # a server's start-up over a minimal MCPServer's, each answer, same rounds
_STATUS_LIMITS = {"call1": 4.0, "warm": 1.2}  # over the read walk in one process
# The first server ever on a tree, its first implementation dispatch: the bound of status's first answer ever.
_FIRST_EVER_RATIO = _STATUS_LIMITS["call1"]
_CALLS = {"call1": "the first answer ever (an empty cache)", "warm": "warm"}
_RESTARTED_RATIO = 1.2  # a restarted server's first answer over its own warm answer
_KB_PER_TASK = 1.0
_FAST_PATH_GAIN = 1.5  # what a fast path must earn over the plain way, on the figure it speeds, to stay
GLANCE_UP_TO = 10_000  # the cold glance is weighed up to here: judging all of 100,000 a round costs minutes
MEMORY_AFTER_DISPATCHES = 100  # implementation dispatches a warm server makes before its memory is read
_CREATE_MS = 50.0
_FIRST_CREATE_MS = 1000.0
_TOKEN_INDEX_RATIO = 1.5  # a restarted team server's token index over a read walk (a stat of each task, read from rows)
_VALIDATOR_RATIO = 0.6
_HOOK_RATIO = 1.5
_SANDBOX_ADDED_MS = 20.0
_REMOTE_HOOK_RATIO = 2.0
_CPU_FLAT = 1.2
_AUDIT_RATIO = 3.0
_AUDIT_SIZES = ("1000", "10000")  # bench.evidence.AUDIT_SIZES, as the JSON keys them


@dataclass(frozen=True)
class Standing:
    section: str
    target: str
    figure: str  # the subject as measured, with its ratio to the floor where there is one
    floor: str  # what it is read against, measured in the same run
    met: bool | None  # None: not measured in this run


def _at(results: dict[str, Any], *path: str) -> Any:
    node: Any = results
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node


def _missing(section: str, target: str) -> Standing:
    return Standing(section, target, "not measured in this run", "", None)


def _hooks(results: dict[str, Any]) -> Iterator[Standing]:
    hooks = results.get("hooks")
    if hooks is None:
        yield _missing("hooks", f"guard per hook event <= {_HOOK_RATIO}x a minimal python -I -S hook")
        return
    floor = f"minimal hook p50 {hooks['floor']['p50_ms']} ms"
    for event in ("pre_tool_allow", "pre_tool_deny", "post_tool", "stop"):
        ratio = hooks["ratio_to_floor"][event]
        figure = f"{hooks[event]['p50_ms']} ms, {spread(ratio)}"
        yield Standing(
            "hooks",
            f"guard {event.replace('_', ' ')} <= {_HOOK_RATIO}x floor",
            figure,
            floor,
            ratio["p50"] <= _HOOK_RATIO,
        )


def _remote(results: dict[str, Any]) -> Iterator[Standing]:
    """The guard of an executor elsewhere (``hook_process.py --url``), asking the team server and from its
    cache, over the minimal hook script timed in the same rounds."""
    remote = results.get("remote")
    for case, label in (("asks", "asking the team server"), ("cached", "from its cache")):
        target = f"guard --url per hook event, {label} <= {_REMOTE_HOOK_RATIO:g}x a minimal python -I -S hook"
        ratio = _at(remote or {}, f"lean_{case}_ratio")
        if remote is None or ratio is None:
            yield _missing("remote", target)
            continue
        subject = remote["lean_asks_server" if case == "asks" else "lean_cached"]
        floor = f"minimal hook p50 {remote['minimal_hook']['p50_ms']} ms"
        yield Standing(
            "remote", target, f"{subject['p50_ms']} ms, {spread(ratio)}", floor, ratio["p50"] <= _REMOTE_HOOK_RATIO
        )


def _sandbox(results: dict[str, Any]) -> Iterator[Standing]:
    target = f"sandbox start-up <= {_SANDBOX_ADDED_MS:g} ms over a bare exec"
    figures = results.get("sandbox")
    if figures is None or "skipped" in figures:
        yield _missing("sandbox", target)
        return
    added = figures["added_ms"]
    figure = f"{figures['sandbox']['p50_ms']} ms, +{added['p50']} ms (rounds {added['min']}-{added['max']})"
    floor = f"bare exec p50 {figures['floor']['p50_ms']} ms"
    yield Standing("sandbox", target, figure, floor, added["p50"] <= _SANDBOX_ADDED_MS)


def _startup(results: dict[str, Any]) -> Iterator[Standing]:
    """Each role's start-up, to its initialize answer and to its tools/list answer, over the minimal
    MCPServer's of the same rounds; a floor that answered nothing fails the bench before this."""
    minimal = _at(results, "startup", "tools_list_bytes", "minimal")
    figures = results.get("startup") or {}
    for answer, suffix, floor_figures in (
        ("initialize", "_initialize", figures.get("initialize")),
        ("tools/list", "", figures),
    ):
        for role in ("lead", "executor"):
            target = f"{role} server start-up to its {answer} answer <= {STARTUP_RATIO}x a minimal MCPServer"
            ratio = figures.get(f"ratio_{role}{suffix}")
            if minimal is None or ratio is None or floor_figures is None:
                yield _missing("startup", target)
                continue
            figure = f"{floor_figures[role]['p50_ms']} ms, {spread(ratio)}"
            floor = f"minimal p50 {floor_figures['minimal']['p50_ms']} ms (min {floor_figures['minimal']['min_ms']})"
            yield Standing("startup", target, figure, floor, ratio["p50"] <= STARTUP_RATIO)


def _status(results: dict[str, Any]) -> Iterator[Standing]:
    sizes = results["settings"]["status_sizes"]
    for size in sizes:
        stdio = _at(results, "status", str(size), "stdio")
        for call, limit in _STATUS_LIMITS.items():
            target = f"status over stdio, {_CALLS[call]} @ {size:,} <= {limit}x read walk"
            ratio = _at(stdio or {}, call, "read_ratio")
            if ratio is None:
                yield _missing("status", target)
                continue
            figure = f"{stdio[call]['seconds']} s, {spread(ratio)}"
            if call == "call1" and "call1_cpu_seconds" in stdio:  # a split walk spends a child's CPU too
                figure += f", CPU {stdio['call1_cpu_seconds']} s"
            yield Standing("status", target, figure, f"read walk {stdio['read_seconds']} s", ratio["p50"] <= limit)
        yield _restarted(stdio, size)
        yield from _later_calls(stdio, size)
        if size <= GLANCE_UP_TO:
            yield _glance(results, size)
    yield _memory(results, max(sizes))  # the issue's: per task at its largest tree, where fixed costs fade


def _glance(results: dict[str, Any], size: int) -> Standing:
    """The cold glance (``files.sightings``) earns its place: a fresh server's first status walk judging
    every task takes at least ``_FAST_PATH_GAIN`` times the walk as shipped, in the same rounds."""
    target = f"status, a fresh server's first walk @ {size:,}: judging every task >= {_FAST_PATH_GAIN}x glancing"
    glance = _at(results, "status", str(size), "glance")
    if glance is None:
        return _missing("status", target)
    ratio = glance["judging_over_glancing"]
    figure = f"judging every task {glance['judging_seconds']} s, {spread(ratio)}"
    floor = f"the walk as shipped, glancing, {glance['glancing_seconds']} s, same rounds"
    return Standing("status", target, figure, floor, ratio["p50"] >= _FAST_PATH_GAIN)


def _restarted(stdio: dict[str, Any] | None, size: int) -> Standing:
    """A server restarted on a tree judged before (the cache on disk): its first answer over its warm one."""
    target = f"status over stdio, a restarted server's first answer @ {size:,} <= {_RESTARTED_RATIO}x warm"
    restarted = _at(stdio or {}, "restarted")
    if restarted is None:
        return _missing("status", target)
    ratio = restarted["warm_ratio"]
    figure = f"{restarted['seconds']} s, {spread(ratio)}, {restarted['unjudged']} unjudged"
    floor = f"warm answer of the same server {restarted['warm_seconds']} s"
    return Standing("status", target, figure, floor, ratio["p50"] <= _RESTARTED_RATIO)


def _later_calls(stdio: dict[str, Any] | None, size: int) -> Iterator[Standing]:
    target = f"status over stdio @ {size:,}: calls 2 and 3 no slower than call 1"
    if stdio is None or "call3" not in stdio:
        yield _missing("status", target)
        return
    first, second, third = (stdio[call]["seconds"] for call in ("call1", "call2", "call3"))
    met = max(second, third) <= first
    yield Standing("status", target, f"{first}, {second}, {third} s", "call 1 of the same fresh servers", met)


def _memory(results: dict[str, Any], size: int) -> Standing:
    """(The warm server's peak - the empty-tree server's peak of the same round) / tasks, median of the rounds."""
    after = f"after {MEMORY_AFTER_DISPATCHES} dispatches"
    target = f"warm server memory @ {size:,} {after} <= {_KB_PER_TASK} KB/task (default settings)"
    memory = _at(results, "status", str(size), "stdio", "memory")
    if memory is None:
        return _missing("status", target)
    kb = memory["kb_per_task"]
    figure = f"peak {memory['server_peak_rss_mb']} MB, {kb['p50']:.2f} KB/task (rounds {kb['min']:.2f}-{kb['max']:.2f})"
    floor = f"empty tree's server {memory['empty_server_peak_rss_mb']} MB, same rounds"
    return Standing("status", target, figure, floor, kb["p50"] <= _KB_PER_TASK)


def _dispatch(results: dict[str, Any]) -> Iterator[Standing]:
    size = max(results["settings"]["sizes"])
    target = f"implementation create_task @ {size:,} active tasks <= {_CREATE_MS:g} ms"
    dispatch = _at(results, "scaling", str(size), "dispatch")
    if dispatch is None:
        yield _missing("scaling", target)
        return
    p50 = dispatch["steady_implementation_tree_p50_ms"]
    stat, review = dispatch["steady_stat_floor_p50_ms"], dispatch["steady_review_tree_p50_ms"]
    floor = f"a stat of each task {stat} ms; a review's create_task {review} ms"
    yield Standing("scaling", target, f"p50 {p50} ms", floor, p50 <= _CREATE_MS)
    yield from _first_dispatch(dispatch, size)


def _first_dispatch(dispatch: dict[str, Any], size: int) -> Iterator[Standing]:
    """A server's first implementation dispatch: restarted from the claim rows the one before left (within
    a second), and the first server ever on the tree (no rows: every task of the active history judged
    from its files, so its floor is a read walk of the tree from the same rounds; the second shown beside)."""
    restarted = (
        f"a restarted server's first implementation create_task @ {size:,} <= {_FIRST_CREATE_MS:g} ms, no watches"
    )
    first_ever = (
        f"the first server ever on a tree (no claim rows): its first implementation create_task @ {size:,} "
        f"<= {_FIRST_EVER_RATIO}x read walk, no watches"
    )
    if dispatch.get("server_first_restarted_ms") is None:
        yield _missing("scaling", restarted)
        yield _missing("scaling", first_ever)
        return
    watches = dispatch["server_first_inotify_watches"]
    fresh = dispatch.get("first_implementation_ms")
    floor = f"a stat of each task {dispatch['steady_stat_floor_p50_ms']} ms" + (
        f"; a fresh process's first implementation create_task {fresh} ms" if fresh is not None else ""
    )
    figure_ms = dispatch["server_first_restarted_ms"]
    met = figure_ms <= _FIRST_CREATE_MS and watches == 0
    yield Standing("scaling", restarted, f"{figure_ms} ms, {watches} inotify watches", floor, met)
    ratio = dispatch.get("server_first_fresh_over_read_walk")
    if ratio is None:
        yield _missing("scaling", first_ever)
        return
    cold_ms = dispatch["server_first_fresh_cache_ms"]
    within = "within" if cold_ms <= _FIRST_CREATE_MS else "over"
    figure = f"{cold_ms} ms ({within} {_FIRST_CREATE_MS:g} ms), {spread(ratio)}, {watches} inotify watches"
    floor = f"read walk {dispatch['server_first_read_walk_ms']} ms, same rounds"
    yield Standing("scaling", first_ever, figure, floor, ratio["p50"] <= _FIRST_EVER_RATIO and watches == 0)
    yield from _token_index(dispatch, size)


def _token_index(dispatch: dict[str, Any], size: int) -> Iterator[Standing]:
    """A restarted team server's token index (what its first executor waits for), from its rows."""
    target = f"a restarted team server's token index @ {size:,} <= {_TOKEN_INDEX_RATIO}x read walk"
    ratio = dispatch.get("token_index_restarted_over_read_walk")
    if ratio is None:
        yield _missing("scaling", target)
        return
    figure = f"{dispatch['token_index_restarted_ms']} ms, {spread(ratio)}"
    floor = (
        f"read walk {dispatch['server_first_read_walk_ms']} ms, same rounds; "
        f"the first index ever (no rows) {dispatch['token_index_first_ms']} ms"
    )
    yield Standing("scaling", target, figure, floor, ratio["p50"] <= _TOKEN_INDEX_RATIO)


def _validator(results: dict[str, Any]) -> Iterator[Standing]:
    for case in ("implementation", "implementation_signed"):
        target = f"handoff-validate, {case.replace('_', ' ')} return <= {_VALIDATOR_RATIO}x the seed"
        ratio = _at(results, "validator", f"ratio_{case}", "node")
        if ratio is None:
            yield _missing("validator", target)
            continue
        p50 = results["validator"][f"handoff-validate_{case}"]["p50_ms"]
        floor = f"node's bare start {results['validator']['node_-e_empty']['p50_ms']} ms (a lower bound of the seed)"
        yield Standing("validator", target, f"{p50} ms, {spread(ratio)}", floor, ratio["p50"] <= _VALIDATOR_RATIO)


def _team(results: dict[str, Any]) -> Iterator[Standing]:
    sizes = _at(results, "http", "status_clients")
    if not sizes:
        yield _missing("http", f"team server CPU per status call, 50 clients <= {_CPU_FLAT}x 1 client")
        return
    for size, cpu in sizes.items():
        target = f"team server CPU per status call @ {int(size):,} tasks, 50 clients <= {_CPU_FLAT}x 1 client"
        ratio = cpu["ratio_50_1"]
        figure = f"{cpu['50']['cpu_ms_per_call_p50']} ms/call, {spread(ratio)}"
        floor = f"1 client {cpu['1']['cpu_ms_per_call_p50']} ms/call, same rounds"
        yield Standing("http", target, figure, floor, ratio["p50"] <= _CPU_FLAT)


def _audit(results: dict[str, Any]) -> Iterator[Standing]:
    """``audit_task`` of a change of each size over ``git diff --name-status`` of the same change, same rounds."""
    for size in _AUDIT_SIZES:
        target = f"audit_task of a {int(size):,}-file change <= {_AUDIT_RATIO:g}x git diff --name-status"
        figures = _at(results, "evidence", "audit", size)
        if figures is None:
            yield _missing("evidence", target)
            continue
        ratio = figures["ratio"]
        figure = f"{figures['audit_task']['p50_ms']} ms, {spread(ratio)}, first audit {figures['first_audit_ms']} ms"
        floor = f"git diff p50 {figures['git_diff_floor']['p50_ms']} ms"
        yield Standing("evidence", target, figure, floor, ratio["p50"] <= _AUDIT_RATIO)


_READERS: tuple[Callable[[dict[str, Any]], Iterator[Standing]], ...] = (
    _startup,
    _hooks,
    _remote,
    _sandbox,
    _status,
    _team,
    _dispatch,
    _validator,
    _audit,
)


def standings(results: dict[str, Any]) -> list[Standing]:
    return [standing for read in _READERS for standing in read(results)]


def rows(found: list[Standing]) -> list[str]:
    """One line per target measured; the sections that measured none, named once."""
    mark = {True: "met", False: "MISSED", None: "-"}
    ran = {s.section for s in found if s.met is not None}
    lines = [f"{mark[s.met]:<7} {s.target:<72} {s.figure}  [floor: {s.floor}]" for s in found if s.section in ran]
    if idle := [section for section in SECTIONS if section not in ran]:
        lines.append(f"-       the targets of {', '.join(idle)}: not measured in this run")
    measured = [s for s in found if s.met is not None]
    lines.append(f"{sum(bool(s.met) for s in measured)} of {len(measured)} measured targets met")
    return lines


def missed(found: list[Standing]) -> list[str]:
    """The targets measured in this run and not met: with ``--targets``, any of them fails the run."""
    return [s.target for s in found if s.met is False]


def as_json(found: list[Standing]) -> list[dict[str, Any]]:
    return [asdict(s) for s in found]

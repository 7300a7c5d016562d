"""The Lead's own session as a writer: its PreToolUse hook, and a commit in the main tree.

The Lead and the host's native collaborators count as writers [seed 001 coordination-contract:
Lead 及宿主原生协作者参与代码写入同样计数; 003 路径所有权：路径所有权是逻辑写入边界]; the Git
index is serialised and nobody stages another's work [seed 000 implementation-procedure: Git index
操作由 Lead 协调串行，不暂存他人改动]. So a write of the Lead's session (``handoff-mcp guard
--lead``) to a path an outstanding executor task holds is denied, naming the holder and the way
out; a path no executor holds, or one the Lead's own claim (``claim_writer``) covers, is allowed.
What an executor holds: its writable globs and shared paths (whichever tree the path is in: path
ownership is logical, the project tree and the executor's worktree alike), a read-only task's
artifacts, and, for a task whose TASK cannot be read, everything. A commit in the main tree that
stages such a path is refused the same way. Anything unreadable denies: an event that is not JSON, a
path or a cwd that names no file (a NUL, a lone surrogate), a claim that cannot be read, an error of
any kind (``server.cli.guard``).

What a task holds is read from its TASK as the Lead published it: given the Lead's anchor (the
Lead's session holds its secret), a TASK that does not verify holds everything (``claims``), so an
executor that narrows its globs or rewrites its TASK frees nothing for the Lead.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from pathlib import Path

from handoff_core.contract.anchor import TaskAnchor
from handoff_core.contract.globs import glob_regex
from handoff_core.errors import HandoffError
from handoff_core.files.task_dir import Roots
from handoff_core.services.evidence.hook_call import Decision
from handoff_core.services.evidence.hook_event import EventUnreadable, read_event
from handoff_core.services.rules.ownership import Claim
from handoff_core.services.tree.queries import Queries

__all__ = ["decide_lead", "holder_of", "hook_answer", "main_tree_commit", "proven_committer"]


def hook_answer(decision: Decision) -> str:
    """Nothing for an allow (the CLI's own permissions apply), the PreToolUse deny both CLIs document otherwise."""
    if decision.allow:
        return ""
    output = {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": decision.reason}
    return json.dumps({"hookSpecificOutput": output})


WAY_OUT = (
    "wait for its REPORT (wait_for_reports), or end it with release_writer and evidence; then claim_writer "
    "the path before the Lead writes it"
)


def _relative(path: str, root: str) -> str | None:
    prefix = root.rstrip("/") + "/"
    return path[len(prefix) :] if path.startswith(prefix) else None


def _held(claim: Claim) -> tuple[str, ...]:
    return (*claim.writable, *(path for path, _ in claim.shared), *claim.artifacts)


def _covers(globs: Iterable[str], relative: str) -> str | None:
    for glob in globs:
        if re.fullmatch(glob_regex(glob), relative):
            return glob
    return None


def holder_of(path: str, claims: list[Claim], roots: Roots) -> tuple[Claim, str] | None:
    """The executor claim that holds ``path`` (absolute, resolved) and the glob that covers it; None
    when no executor holds it or the Lead's own claim does. The handoff tree is the tools' own."""
    project, state = (os.path.realpath(r) for r in (roots.project_root, roots.state_root))
    if path == state or _relative(path, state) is not None:
        return None
    own = [c for c in claims if c.self_writer]
    for claim in [c for c in claims if not c.self_writer] + own:
        trees = [t for t in (project, os.path.realpath(claim.worktree) if claim.worktree else "") if t]
        for relative in (r for t in trees if (r := _relative(path, t)) is not None):
            if claim.unreadable or claim.held_because:
                return claim, "**"
            if (glob := _covers(_held(claim), relative)) is not None:
                return None if claim.self_writer else (claim, glob)
    return None


def _claims(roots: Roots, anchor: TaskAnchor | None) -> list[Claim]:
    queries = Queries(roots)
    queries.use_anchor(lambda: anchor)
    return queries.claims()


def decide_lead(data: bytes, roots: Roots, anchor: TaskAnchor | None = None) -> Decision:
    """Whether the write the Lead's hook event describes may go ahead; with the Lead's ``anchor``, each
    claim rests on its TASK as published."""
    try:
        event = read_event(data, "pre-tool")  # the executors' hook reads events the same way
    except EventUnreadable as exc:
        return Decision(False, f"handoff guard for the Lead: {exc}; denied")
    paths, cwd = event.paths, event.cwd
    if not paths:
        return Decision(True)
    try:
        claims = _claims(roots, anchor)
    except (HandoffError, OSError) as exc:
        return Decision(False, f"handoff guard for the Lead: cannot read the writer claims ({exc}); denied")
    for path in paths:
        try:
            resolved = os.path.realpath(os.path.join(cwd, path))
        except (ValueError, OSError) as exc:  # read_event refuses a NUL or a lone surrogate; a name too long
            return Decision(False, f"handoff guard for the Lead: cannot resolve {path[:200]!r} ({exc}); denied")
        if (held := holder_of(resolved, claims, roots)) is not None:
            claim, glob = held
            why = f"the Lead may not write {resolved}: {claim.describe()} holds it ({glob}); {WAY_OUT}"
            return Decision(False, why)
    return Decision(True)


def proven_committer(roots: Roots, ref: str, token: str, anchor: TaskAnchor | None = None) -> bool:
    """Whether ``token`` is the report token of task ``ref``, as its TASK's check line records it: what a
    commit naming the task in ``HANDOFF_REF`` (a name anyone can set) must show to be that task's. A
    TASK that cannot be read, records no check line, or (given the Lead's anchor) is not as published,
    proves nothing."""
    from handoff_core.contract.ids import parse_ref
    from handoff_core.services.capabilities.tokens import check_token_hash

    try:
        parsed = parse_ref(ref)
        task, stored = Queries(roots).read_task(parsed)
        if task.token_check is None:
            return False
        if anchor is not None and anchor.state(ref, stored.text.encode()) != "anchored":
            return False
        check_token_hash(task.token_check, parsed, token)
    except HandoffError:
        return False
    return True


def main_tree_commit(
    tree: Path, roots: Roots, keep: dict[str, str], committer: str = "", anchor: TaskAnchor | None = None
) -> list[str]:
    """Each staged path of a commit in ``tree`` that an outstanding executor holds, as ``path: holder``;
    a path held by ``committer`` (a task ``proven_committer`` proved: it commits its own work) is not."""
    from handoff_core.files import git  # here: the PreToolUse hook never starts git

    claims = [c for c in _claims(roots, anchor) if not committer or str(c.ref) != committer]
    found = []
    for change in git.staged_paths(tree, keep):
        for side in (change.path, change.old_path):
            if side and (held := holder_of(os.path.realpath(f"{tree}/{side}"), claims, roots)) is not None:
                found.append(f"{side}: held by {held[0].describe()} ({held[1]})")
    return found

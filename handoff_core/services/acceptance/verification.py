"""``verify_task``: a task's acceptance checks replayed at its reported checkpoint, contained as an
executor is, and what the replay says of the REPORT [seed result-and-recovery: REPORT 的 completed
只表示候选已交回……不接受伪绿色结果].

The checks are read from the TASK the Lead published (its anchor must verify: a TASK changed since
dispatch could name any command). A worktree task is replayed at the REPORT's checkpoint, a
``current`` one on the project tree as it is now (its ``HEAD`` and what is uncommitted), each in a
throwaway copy (``scratch``) that is removed afterwards: nothing in the project changes. Each check
runs in its own supervisor (``containment.replay``): writes only in the copy and a private
temporary folder, no TCP connect, the Lead's secret unreadable, bounded in time and output. The
answer gives each check's exit code, time and the tail of its output, and flags a check that failed
or timed out, a REPORT that claims a pass the replay contradicts (``claims``), and paths the task
changed that judge the checks (``evidence.judges``) or that lie outside its scope (the checks read
the whole tree). A pass with such a path is ``unknown``: the Lead decides whether the standard moved.
The verdict and its reason are kept for status (``evidence.verifications``).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import NamedTuple

from handoff_core.contract.anchor import TASK_CHANGED, TASK_UNANCHORED, anchor_state
from handoff_core.contract.ids import Ref
from handoff_core.contract.report import COMMIT_RE
from handoff_core.contract.task import Task
from handoff_core.contract.task_file import parse_task
from handoff_core.errors import GitError
from handoff_core.files import git, git_process
from handoff_core.layout import REPORT_FILE, TASK_FILE, Conclusion
from handoff_core.services.acceptance.claims import claimed_passes
from handoff_core.services.acceptance.replayed import Refused, Replayed, check_environment, replay
from handoff_core.services.acceptance.scratch import Scratch, remove, scratch_copy
from handoff_core.services.evidence.audit import Audit, audit_task
from handoff_core.services.evidence.judges import Reader, judging
from handoff_core.services.evidence.verifications import Recorded, record_verification
from handoff_core.services.rules.scope_rule import ScopeRule
from handoff_core.services.tree.queries import Queries

__all__ = ["NO_CHECKS", "Verification", "verify_task"]

NO_CHECKS = "the TASK lists no acceptance checks: nothing to replay (dispatch with acceptance_checks)"
NO_SECRET = "this server holds no Lead secret: the TASK's checks cannot be told from ones rewritten since dispatch"  # noqa: S105 - a message, not a secret
MAX_FLAGS = 50
_READ_LIMIT = 1024 * 1024  # bytes of a configuration file compared before and after


@dataclass(frozen=True, kw_only=True)
class Verification:
    verdict: Conclusion
    reason: str
    replayed: str = ""  # what was replayed: a checkpoint, or the project tree as returned
    checks: tuple[Replayed, ...] = ()
    flags: tuple[str, ...] = ()
    recorded: bool = False  # kept for status (``evidence.verifications``)


class _Unknown(Exception):
    """Nothing can be replayed: why."""


def _checked_task(queries: Queries, ref: Ref) -> Task:
    data = queries.read_file(ref, TASK_FILE)  # read once: the checks run are the bytes anchored
    anchor = queries.anchor
    if anchor is None:
        raise _Unknown(NO_SECRET)
    state = anchor_state(anchor.key, str(ref), data)
    if state != "anchored":
        raise _Unknown(TASK_CHANGED if state == "changed" else TASK_UNANCHORED)
    return parse_task(data.decode("utf-8", "replace").removeprefix("\ufeff"))


class _Source(NamedTuple):
    top: Path  # the work tree copied from
    commit: str | None  # the commit copied; None: the work tree as it is
    said: str  # what is replayed, for the answer
    base: str  # the commit the task started from ("" when none): the "before" of what judges the checks


def _source(task: Task, audit: Audit, rule: ScopeRule) -> _Source:
    scope = task.scope
    if scope.worktree or scope.remote:
        top = Path(audit.worktree) if audit.worktree else git.work_tree_of(rule.root)
        checkpoint = audit.checkpoint
        if top is None or not checkpoint or not COMMIT_RE.match(checkpoint):
            raise _Unknown(f"no checkpoint to replay: {audit.reason}")
        if git.rev_parse(top, checkpoint) != checkpoint or (
            scope.base and git.is_ancestor(top, scope.base, checkpoint) is not True
        ):
            raise _Unknown(f"the checkpoint {checkpoint} is not a commit here that descends from the base")
        return _Source(top, checkpoint, f"checkpoint {checkpoint}", scope.base)
    top = git.work_tree_of(rule.root)
    if top is None:
        raise _Unknown("the project is in no git repository: there is no tree to copy")
    head = git.rev_parse(top, "HEAD")
    return _Source(
        top, None, f"the project tree as returned (HEAD {head or 'none'} and what is uncommitted)", scope.base
    )


def _in_commit(top: Path, commit: str) -> Reader:
    def read(path: str) -> bytes | None:
        if not commit:
            return None
        code, out = git_process.run(top, "cat-file", "blob", f"{commit}:{path}", ok=(0, 128))
        return out[:_READ_LIMIT] if code == 0 else None

    return read


def _in_copy(tree: str) -> Reader:
    def read(path: str) -> bytes | None:
        try:
            fd = os.open(os.path.join(tree, path), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            return None
        try:
            return os.read(fd, _READ_LIMIT)
        except OSError:
            return None
        finally:
            os.close(fd)

    return read


def _judged(task: Task, audit: Audit, rule: ScopeRule, source: _Source, copy: Scratch, prefix: str) -> list[str]:
    """The task's changed paths that judge its checks, or that lie outside its scope, as flags."""
    base_dir = rule.root_text if task.scope.worktree else str(source.top)
    flags = [
        f"changed {path} outside its scope ({why}): the checks read the whole tree"
        for path in audit.paths
        if (why := rule.judge(f"{base_dir}/{path}")) is not None
    ]
    found = judging(audit.paths, task.checks, prefix, _in_commit(source.top, source.base), _in_copy(copy.tree))
    return flags + [f"changed what judges its checks: {path} ({why})" for path, why in found]


def _folder(copy: Scratch, prefix: str, cwd: str) -> str | None:
    """The check's folder in the copy, when it is a folder there (not reached through a link out of it)."""
    folder = os.path.realpath(os.path.join(copy.tree, prefix, cwd))
    inside = folder == os.path.realpath(copy.tree) or folder.startswith(os.path.realpath(copy.tree) + os.sep)
    return folder if inside and os.path.isdir(folder) else None


def _run_all(task: Task, copy: Scratch, prefix: str, secret_file: str) -> list[Replayed]:
    env = check_environment(dict(os.environ), copy)
    done = []
    for check in task.checks:
        folder = _folder(copy, prefix, check.cwd)
        if folder is None:
            why = f"not run: {check.cwd} is not a folder of the replayed tree"
            done.append(Replayed(run=check.run, cwd=check.cwd, exit_code=None, seconds=0.0, tail="", why=why))
            continue
        done.append(replay(check, folder, copy, secret_file, env))
    return done


def _verdict(checks: list[Replayed], judged: list[str]) -> tuple[Conclusion, str]:
    failed = [(n, c) for n, c in enumerate(checks, start=1) if not c.passed]
    if failed:
        said = "; ".join(
            f"check {n} `{c.run[:80]}` {c.why}" + (" (the REPORT claims it passed)" if c.claimed else "")
            for n, c in failed[:3]
        )
        return "failed", f"{len(failed)} of {len(checks)} check(s) failed on replay: {said}"
    if judged:
        return "unknown", (
            f"every check ({len(checks)}) passed on replay, but the task changed what judges them "
            f"({len(judged)} path(s), see flags): decide whether the standard moved"
        )
    return "passed", f"every check ({len(checks)}) passed on replay"


def _replayed(queries: Queries, ref: Ref, task: Task, report: bytes, secret_file: str) -> Verification:
    roots = queries.roots
    rule = ScopeRule(task, str(ref), os.path.realpath(roots.project_root), os.path.realpath(roots.state_root))
    audit = audit_task(queries, ref)
    source = _source(task, audit, rule)
    prefix = "" if source.commit is not None else os.path.relpath(rule.root_text, str(source.top))
    prefix = "" if prefix == "." else prefix.replace(os.sep, "/")
    copy = scratch_copy(source.top, source.commit)
    try:
        judged = _judged(task, audit, rule, source, copy, prefix)
        checks = _run_all(task, copy, prefix, secret_file)
    finally:
        remove(copy.folder)
    claims = claimed_passes(report, task.checks)
    checks = [replace(c, claimed=claim) for c, claim in zip(checks, claims, strict=True)]
    lies = [
        f"the REPORT claims `{c.run[:120]}` passed; on replay it {c.why}" for c in checks if c.claimed and not c.passed
    ]
    verdict, reason = _verdict(checks, judged)
    return Verification(
        verdict=verdict,
        reason=reason,
        replayed=source.said,
        checks=tuple(checks),
        flags=tuple((lies + judged)[:MAX_FLAGS]),
    )


def verify_task(queries: Queries, ref: Ref, secret_file: str) -> Verification:
    """Replay ``ref``'s acceptance checks and judge what the replay says; the verdict is kept for status
    whenever a REPORT was judged."""
    report = queries.read_optional(ref, REPORT_FILE)
    try:
        task = _checked_task(queries, ref)
        if not task.checks:
            return Verification(verdict="unknown", reason=NO_CHECKS)
        if report is None:
            return Verification(verdict="unknown", reason="no REPORT yet: nothing to verify")
        found = _replayed(queries, ref, task, report, secret_file)
    except (_Unknown, Refused, GitError) as exc:
        if report is None:
            return Verification(verdict="unknown", reason=_said(exc))
        found = Verification(verdict="unknown", reason=_said(exc))
    mtime = queries.snapshot(ref).file(REPORT_FILE).mtime
    kept = record_verification(
        str(queries.roots.state_root), str(ref), Recorded(found.verdict, found.reason, time.time()), mtime
    )
    return replace(found, recorded=kept)


def _said(exc: Exception) -> str:
    return exc.message if isinstance(exc, GitError) else str(exc)

"""The evidence of a task whose branch lives on the git remote (its executor works on another machine).

The audit fetches that one branch of the remote the TASK names into a private ref of the Lead's
repository (``refs/handoff/audit/...``: no tags, no submodules, no FETCH_HEAD; git bounded as for any
audit, and reading none of the repository's config: ``files.git_remote``), then judges base to
checkpoint exactly as for a local worktree. The checkpoint must be on the branch as pushed: one the
remote does not hold is a reason, never a guess. Nothing is ever pushed; nothing outside the private
ref changes.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from handoff_core.contract.scope import Scope
from handoff_core.files import git, git_remote

__all__ = ["AUDIT_REFS", "fetched"]

AUDIT_REFS = "refs/handoff/audit/"


def fetched(top: Path, ref: str, scope: Scope, checkpoint: str) -> git.Evidence | str:
    """The evidence from ``scope.base`` to ``checkpoint`` once the task's branch is fetched (the branch's
    tip as ``head``; no work tree here, so nothing dirty); a string says why there is none."""
    into = AUDIT_REFS + hashlib.sha256(ref.encode()).hexdigest()[:24]
    where = f"branch {scope.branch} of the git remote {scope.remote}"
    tip = git_remote.fetch_branch(top, scope.remote, scope.branch, into)
    if tip is None:
        return f"{where} cannot be fetched (not pushed, or the remote is out of reach): nothing to audit"
    if git.is_ancestor(top, checkpoint, tip) is not True:
        return f"{where} does not hold the checkpoint {checkpoint}: push it (git push {scope.remote} {scope.branch})"
    descends = git.is_ancestor(top, scope.base, checkpoint)
    changes = git.changes(top, scope.base, checkpoint) if descends else []
    return git.Evidence(descends, changes, [], tip)

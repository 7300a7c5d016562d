"""A TASK anchored by its Lead: a MAC of its published bytes under a key only the Lead's secret gives.

A TASK sits where its executor can write, so what it says (its globs, its signing key) is the
executor's word once published, unless something outside the tree remembers it. The server that
publishes a TASK appends one line to its generated Return list, ``- Task anchor:
`hmac-sha256:<hex>```, an HMAC-SHA256 under a key derived from the Lead's secret of the task's
ref and the SHA-256 of the TASK without that line. Whoever holds the Lead's secret (the Lead's
server, the team server, ``handoff-validate --lead-key``) recomputes it: a TASK edited after
publishing, its anchor line copied from another task or removed, no longer verifies. Whoever
holds only the tree cannot check it, and cannot forge it either. The line is plain Markdown in
the Return section: the TASK stays what the seed validator accepts.

The same holder derives each task's signing key from the secret (``TaskAnchor.signing_key``), so
the Lead's proof of a REPORT never rests on the key line of a TASK the executor could rewrite.

A TASK stripped of every line a server writes reads like one written by hand. So the Lead records,
beside its secret, each state root it has published an anchored TASK into (``governance``): in a
state root its secret governs, every TASK is one the Lead published, and a TASK that does not
verify is ``changed`` whatever lines it lacks (``TaskAnchor.state``). A state root the secret does
not govern keeps its hand-written TASKs readable: ``unanchored``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Literal, NamedTuple

from handoff_core.contract.proof import Proof, proof_by
from handoff_core.contract.task import ANCHOR_LABEL

__all__ = [
    "CHANGED_HOLD",
    "TASK_CHANGED",
    "TASK_UNANCHORED",
    "AnchorState",
    "TaskAnchor",
    "anchor_state",
    "anchored",
    "lead_proof",
    "state_problem",
]

# The last line of the file, exactly as written: the bytes before it are all the MAC covers, so nothing may follow.
_ANCHOR_LINE = re.compile(rb"- Task anchor: `hmac-sha256:([0-9a-f]{64})`\n")  # matched whole, on the last line
_LOOSE = b"- Task anchor:"  # the start of any line that claims to be one, well formed or not
_CONTEXT = b"handoff-mcp task anchor v1\0"
# Lines only the server writes: a TASK with any of them was published by a server, and must carry its anchor.
_SERVER_LINES = re.compile(rb"^- Report (?:token check|signing key): ", re.MULTILINE)

AnchorState = Literal["anchored", "changed", "unanchored"]
TASK_CHANGED = (
    "TASK changed since dispatch: its bytes are not the ones the Lead published (it carries no anchor that "
    "verifies under the Lead's secret). Put it back (`git checkout` it, or copy it from the dispatch) or ask the "
    "Lead for a new task; if this server's secret is not the one that dispatched it, pass that secret file"
)
# Why a claim whose TASK does not verify holds the whole workspace (``claims``, status): what was published is unknown.
CHANGED_HOLD = "TASK changed since dispatch, so the scope it was published with is unknown"
TASK_UNANCHORED = (
    "TASK carries no anchor: written by hand (or before anchors), so its scope is the tree's word only; "
    "dispatch it with create_task to have it anchored"
)


class TaskAnchor(NamedTuple):
    """What the Lead's secret lets a verifier recompute: each TASK's anchor, each task's signing key;
    and whether the secret governs the state root (the Lead published TASKs there)."""

    key: bytes  # the anchor's MAC key (``tokens.task_anchor`` derives it from the secret and the state root)
    signing_key: Callable[[str], str]  # a ref's public signing key, as its report token seeds it
    governs: Callable[[], bool]  # asks the Lead's record again: does the secret govern the state root now?
    govern: Callable[[], None]  # records that it does: before the first anchored TASK is published
    governed: bool = False  # what ``governs`` answered when this anchor was taken (it never turns back)

    def state(self, ref: str, task: bytes) -> AnchorState:
        """``anchor_state``, where a TASK that carries no anchor is ``changed`` in a governed state root:
        every TASK there is one the Lead published, so one that does not verify is not it."""
        found = anchor_state(self.key, ref, task)
        return "changed" if found == "unanchored" and self.governed else found


def _mac(key: bytes, ref: str, unanchored: bytes) -> str:
    import hashlib  # here: the validator imports this module, and loads hashlib only with the Lead's key
    import hmac

    message = _CONTEXT + ref.encode() + b"\0" + hashlib.sha256(unanchored).digest()
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def anchored(text: str, key: bytes, ref: str) -> str:
    """``text`` (a TASK ending with its generated Return list) with its anchor as the list's last line."""
    body = text if text.endswith("\n") else f"{text}\n"
    return f"{body}{ANCHOR_LABEL}`hmac-sha256:{_mac(key, ref, body.encode())}`\n"


def anchor_state(key: bytes, ref: str, task: bytes) -> AnchorState:
    """``anchored`` when ``task`` holds exactly one anchor line and it verifies for ``ref``; ``unanchored``
    for a TASK no server published (no anchor, token check or signing key line); else ``changed``."""
    # The last line and byte counts, not a pattern searched line by line: every open claim of a scan
    # and every status verdict of the Lead checks its TASK (~1.3 us here against ~10 us by pattern).
    start = task.rfind(b"\n", 0, len(task) - 1) + 1
    line = _ANCHOR_LINE.fullmatch(task, start)
    loose = task.count(b"\n" + _LOOSE) + task.startswith(_LOOSE)
    if line is None:
        return "changed" if loose or _SERVER_LINES.search(task) else "unanchored"
    if loose != 1:  # the server writes one; two cannot be told apart
        return "changed"
    expected = _mac(key, ref, task[:start]).encode()
    import hmac

    return "anchored" if hmac.compare_digest(expected, line.group(1)) else "changed"


def state_problem(state: AnchorState) -> str | None:
    """What a verifier with the Lead's secret says of a TASK in ``state``: a problem, or None."""
    return TASK_CHANGED if state == "changed" else None


def lead_proof(anchor: TaskAnchor, ref: str, task: bytes, report: bytes) -> Proof:
    """The Lead's proof of ``report``: ``task_changed`` unless its TASK is the one published, else its
    signature checked against the key the Lead derives for ``ref`` (never the TASK's key line)."""
    if anchor.state(ref, task) == "changed":
        return "task_changed"
    return proof_by(anchor.signing_key(ref), report)

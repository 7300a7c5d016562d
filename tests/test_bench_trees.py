"""Generated bench trees: anchored as the Lead's server publishes its TASKs."""

from __future__ import annotations

from pathlib import Path

from bench.trees import CHANGE, generate, secret_of
from handoff_core.services.capabilities.tokens import lead_anchor
from handoff_core.services.tree.claims import ClaimIndex


def test_a_generated_tree_verifies_under_its_secret_so_its_open_reviews_claim_nothing_once_governed(
    tmp_path: Path,
) -> None:
    state_root = tmp_path / "trees" / "tree-300"
    refs = generate(state_root, 300, secret_of(state_root))
    anchor = lead_anchor(secret_of(state_root), state_root.parent, state_root)
    assert anchor is not None
    anchor.govern()  # as the Lead's server does before its first anchored dispatch
    governed = anchor._replace(governed=anchor.governs())
    assert governed.governed
    folder = state_root / "specdev" / "changes" / CHANGE / "sessions"
    states = {governed.state("/".join(ref), (folder / ref[1] / ref[2] / "TASK.md").read_bytes()) for ref in refs}
    assert states == {"anchored"}
    assert ClaimIndex().claims(state_root, [CHANGE], governed) == []


def test_a_tree_generated_without_a_secret_holds_the_workspace_once_a_secret_governs_it(tmp_path: Path) -> None:
    state_root = tmp_path / "trees" / "tree-300"
    generate(state_root, 300)
    generate(tmp_path / "trees" / "other", 1, secret_of(state_root))  # the secret, made for another tree
    anchor = lead_anchor(secret_of(state_root), state_root.parent, state_root)
    assert anchor is not None
    anchor.govern()
    claims = ClaimIndex().claims(state_root, [CHANGE], anchor._replace(governed=True))
    assert len(claims) == 200
    assert all(claim.unreadable for claim in claims)

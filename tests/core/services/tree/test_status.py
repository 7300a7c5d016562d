"""A task's derived status: the notes a full judgement and a glance add to it."""

from __future__ import annotations

from pathlib import Path

from handoff_core.contract.ids import Ref
from handoff_core.contract.validate import LATE_REPORT
from handoff_core.services.writing.store import Store
from tests.support.changes import CHANGE
from tests.support.writers import original_task


def test_a_released_original_contract_task_without_a_report_is_never_said_to_have_a_late_report(
    store: Store, state_root: Path
) -> None:
    # The archive check tells the Lead to end an original-contract writer with release_writer: its
    # RELEASE is then the only closing file, and no REPORT came after it.
    folder = original_task(state_root)
    store.release_writer(Ref(CHANGE, "20250101T000000Z", "001-implement"), "stopped", "pane 3 exited")
    assert not (folder / "REPORT.md").exists()
    for glancing in (False, True):
        (found,) = store.queries.status(CHANGE, glancing=glancing)
        assert found.label == "original-contract:released"
        assert not any(note.startswith(LATE_REPORT) for note in found.notes), found.notes

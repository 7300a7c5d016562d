"""The state-root lock: the one lock every writer that allocates or replaces under the state root holds."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from handoff_core.errors import ChangeNotFound, HandoffError
from handoff_core.files.locking import lock_state_root
from handoff_core.services.project.coordination_setup import plan_choice, save_choice
from handoff_core.services.writing.store import Store

BOUND = 30.0  # seconds any waiting writer gets once the lock is free


def _save_choice(store: Store) -> object:
    state = store.roots.state_root
    return save_choice(state, store.roots.project_root, plan_choice(state, "cli"))


def _publish_new(store: Store) -> object:
    return store.publish_new(("notes",), lambda taken: f"n{len(taken)}.md", b"a note\n")


def _remove_leftovers(store: Store) -> object:
    return store.remove_leftovers()


@pytest.mark.parametrize("write", [_save_choice, _publish_new, _remove_leftovers])
def test_a_writer_waits_while_the_state_root_lock_is_held_and_goes_on_once_it_is_free(
    store: Store, write: Callable[[Store], object]
) -> None:
    done, failed = threading.Event(), []

    def run() -> None:
        try:
            write(store)
        except HandoffError as exc:
            failed.append(exc)
        finally:
            done.set()

    writer = threading.Thread(target=run, daemon=True)
    with lock_state_root(store.roots.state_root):
        writer.start()
        assert not done.wait(0.5)  # held: the writer cannot get past the lock
    assert done.wait(BOUND)
    writer.join(BOUND)
    assert failed == []


def test_a_missing_state_root_is_refused_by_every_writer_and_never_made(tmp_path: Path) -> None:
    missing = tmp_path / "speculo" / ".speculo"
    store = Store(missing, project_root=tmp_path)
    with pytest.raises(ChangeNotFound) as by_store:
        store.remove_leftovers()
    with pytest.raises(ChangeNotFound) as by_setup:
        save_choice(missing, tmp_path, plan_choice(missing, "cli"))
    assert by_store.value.code == by_setup.value.code == "change_not_found"
    assert not missing.exists()

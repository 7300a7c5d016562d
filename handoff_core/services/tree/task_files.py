"""A state root's files read by handle: a task's handoff files, a file below the state root, and
whether a project path exists. Nothing here writes; OS errors leave as ``StorageError``."""

from __future__ import annotations

from handoff_core.contract.ids import Ref
from handoff_core.contract.task import Task
from handoff_core.contract.task_file import parse_task
from handoff_core.contract.values import relative_parts
from handoff_core.files.paths import entry_mode, read_regular, walked
from handoff_core.files.task_dir import Roots, StoredFile, open_task_dir, sha256, translated
from handoff_core.layout import TASK_FILE

__all__ = ["TaskFiles"]


class TaskFiles:
    def __init__(self, roots: Roots) -> None:
        self.roots = roots

    @translated
    def read_task(self, ref: Ref) -> tuple[Task, StoredFile]:
        data = self.read_file(ref, TASK_FILE)
        text = data.decode("utf-8", "replace").removeprefix("\ufeff")
        return parse_task(text), StoredFile(
            ref=ref, path=self.roots.task_dir(ref) / TASK_FILE, sha256=sha256(data), created=False, text=text
        )

    @translated
    def read_file(self, ref: Ref, name: str) -> bytes:
        """One handoff file of a task, refused unless it is a regular, singly linked file."""
        with open_task_dir(self.roots.state_root, ref, active_only=False) as task_dir:
            return task_dir.read(name)

    @translated
    def read_optional(self, ref: Ref, name: str) -> bytes | None:
        with open_task_dir(self.roots.state_root, ref, active_only=False) as task_dir:
            return task_dir.read_optional(name)

    @translated
    def read_state_file(self, *parts: str) -> bytes | None:
        """A file below the state root, or None when it (or a folder on the way) does not exist."""
        try:
            with walked(self.roots.state_root, parts[:-1]) as fd:
                return read_regular(fd, parts[-1])
        except FileNotFoundError:
            return None

    @translated
    def project_has(self, relative: str) -> bool:
        """Whether a project-relative path exists, walked without following symlinks on the way."""
        parts = relative_parts(relative)
        try:
            with walked(self.roots.project_root, parts[:-1]) as fd:
                return entry_mode(fd, parts[-1]) is not None
        except (FileNotFoundError, NotADirectoryError):
            return False

    def log_needles(self, ref: Ref) -> list[str]:
        """Text a session log must mention to be this task's: its ref, or its TASK path."""
        task = self.roots.task_dir(ref) / TASK_FILE
        return [str(ref), f"{ref.session}/{ref.task}", self.roots.shown(task), str(task)]

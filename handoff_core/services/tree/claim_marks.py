"""What the claim index's kernel watches cover, and what their events mark to be judged again."""

from __future__ import annotations

from handoff_core.files.watches import IN_CLOSE_WRITE, IN_IGNORED, IN_MODIFY, Event, Watches

__all__ = ["Key", "Marks", "Target"]

Key = tuple[str, str, str]  # change, round, task
Target = tuple[str, tuple[str, ...]]  # ("task", key), ("round", (change, session)) or ("sessions", (change,))
_WRITTEN = IN_MODIFY | IN_CLOSE_WRITE


class Marks:
    """One inotify instance's watches (or none), what each covers, and what their events marked."""

    def __init__(self, watches: Watches | None, written: dict[tuple[str, str], set[str]]) -> None:
        self.watches = watches
        self.written = written  # tasks whose bytes changed after their judgement, kept across instances
        # What each watch covers: mostly one target, so a tuple (48 B) rather than a set (216 B) each.
        self.targets: dict[int, tuple[Target, ...]] = {}
        self.retired: set[int] = set()  # dropped by the index: what they still report no longer counts
        self.dirty: dict[str, dict[str, set[str] | None]] = {}  # change → round → tasks (None: all)
        self.dirty_changes: set[str] = set()

    def close(self) -> None:
        if self.watches is not None:
            self.watches.close()

    def take(self) -> bool:
        """Mark what every queued event may have changed; False when any may have been lost or came
        for a watch this instance does not know: nothing it covers can be trusted."""
        events = self.watches.drain() if self.watches is not None else []
        return events is not None and all(self._note(event) for event in events)

    def _note(self, event: Event) -> bool:
        targets = self.targets.get(event.wd)
        if targets is None:
            known = event.wd in self.retired
            if event.mask & IN_IGNORED:
                self.retired.discard(event.wd)
            return known
        gone = bool(event.mask & IN_IGNORED)  # the watch itself is gone: what it covered, judged again whole
        for kind, ident in targets:
            if kind == "task":
                change, session, task = ident
                self.mark(change, session, task)
                if event.mask & _WRITTEN:
                    self.written.setdefault((change, session), set()).add(task)
            elif kind == "round":
                self.mark(ident[0], ident[1], event.name if event.name and not gone else None)
            elif event.name and not gone:
                self.mark(ident[0], event.name, None)
            else:
                self.dirty_changes.add(ident[0])
        if gone:
            del self.targets[event.wd]
        return True

    def mark(self, change: str, session: str, task: str | None) -> None:
        rounds = self.dirty.setdefault(change, {})
        if task is None:
            rounds[session] = None
        elif (tasks := rounds.setdefault(session, set())) is not None:
            tasks.add(task)

    def add(self, dir_fd: int, name: str, target: Target) -> int | None:
        """Watch the directory ``dir_fd`` itself or its entry ``name`` for ``target``; None: no watch."""
        if self.watches is None:
            return None
        wd = self.watches.add(dir_fd, name)
        if wd is not None and target not in (covered := self.targets.get(wd, ())):
            self.targets[wd] = (*covered, target)
        return wd

    def release(self, wd: int, target: Target) -> None:
        """``target`` no longer rests on ``wd``; the watch goes when nothing does."""
        targets = self.targets.get(wd)
        if targets is None or target not in targets:
            return
        targets = self.targets[wd] = tuple(covered for covered in targets if covered != target)
        if not targets:
            del self.targets[wd]
            self.retired.add(wd)
            if self.watches is not None:
                self.watches.remove(wd)

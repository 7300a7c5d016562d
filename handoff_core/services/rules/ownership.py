"""Single-writer ownership (SPEC §8), decided from the handoff files alone.

An outstanding implementation task (TASK present, no REPORT, no RELEASE) claims its workspace
and writable globs, with no TTL: a quiet pane never proves a writer stopped. Whether two write
sets overlap is decided exactly (``glob_overlap.overlap``), so ``src/**/*.py`` and ``src/a/*`` overlap
on ``src/a/x.py`` while ``src/a/**`` and ``src/b/**`` never do.

Every writer is counted [seed 001 coordination-contract: 另核对 shared paths、端口、数据库等实际资源;
000 session-files: 共享路径、Git index、构建输出及其他语义资源仍按原 owner/串行阶段协调]: an
outstanding read-only task that names resources or artifacts claims them too. A named resource is
exclusive across every outstanding task, whatever its kind; a read-only task's artifacts overlap
neither a writer's globs nor another task's artifacts. A read-only task claiming neither never
conflicts, and its dispatch never reads the claims.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from handoff_core.contract.glob_overlap import Budget, overlap
from handoff_core.contract.ids import Ref
from handoff_core.contract.scope import Scope
from handoff_core.errors import OwnershipConflict
from handoff_core.layout import Kind, Workspace

__all__ = ["PLATFORM_WRITERS", "Claim", "WriterSlots", "check_dispatch", "room", "writer_slots"]

PLATFORM_WRITERS = 8  # what one machine's coordination can hold: the outer bound on any plan
PARALLEL_WAY = (
    'workspace="required" (each writer in its own worktree), non-overlapping writable globs and writer_limit '
    "set to the plan's parallel writers"
)


@dataclass(kw_only=True, frozen=True)
class Claim:
    ref: Ref
    workspace: Workspace | None  # None: a read-only task (it holds only its artifacts and resources)
    writable: tuple[str, ...]
    shared: tuple[tuple[str, str], ...]  # (path, owner)
    age_seconds: float
    unreadable: bool = False  # its TASK could not be read (or is not the one published): it holds everything
    resources: tuple[str, ...] = ()  # named, exclusive: port:5432, db:test, git-index, integration:main
    held_because: str = ""  # a whole change that cannot be read, a TASK changed since dispatch: why it holds all
    artifacts: tuple[str, ...] = ()  # a read-only task's outputs
    worktree: str = ""  # where its writer works, when not the project tree
    self_writer: str = ""  # "lead" or "team": the Lead's own claim (claim_writer), not an executor's

    @property
    def writer(self) -> bool:
        """Whether it counts as an implementation writer (the cap, the current workspace)."""
        return self.workspace is not None

    def describe(self) -> str:
        if self.held_because:
            return f"{self.ref} ({self.held_because}: it holds the whole workspace until that is fixed)"
        if self.unreadable:
            return f"{self.ref} (TASK.md unreadable, so it holds the whole workspace; fix it or release it)"
        if not self.writer:
            held = ", ".join((*self.artifacts, *self.resources))
            return f"{self.ref} (read-only, holding {held}, age {int(self.age_seconds)}s)"
        return f"{self.ref} ({self.workspace}, {', '.join(self.writable)}, age {int(self.age_seconds)}s)"


def _first_overlap(mine: Iterable[str], theirs: Iterable[str], budget: Budget) -> tuple[str, str, str] | None:
    for a in mine:
        for b in theirs:
            if (example := overlap(a, b, budget)) is not None:
                return a, b, example
    return None


def _refuse(reason: str, holders: list[Claim]) -> OwnershipConflict:
    held = "; ".join(claim.describe() for claim in holders)
    return OwnershipConflict(
        f"{reason}. Held by: {held}. Wait for its REPORT (wait_for_reports), or, if its writer has stopped, "
        "release it with release_writer and evidence; then dispatch again"
    )


def room(outstanding: int, writer_limit: int | None, writer_cap: int) -> int:
    """How many more implementation writers create_task admits now: the smallest of the plan's
    declared limit (none declared: one, seed 001 execution-policy), the project's cap and the
    platform's, less the writers outstanding."""
    return max(0, min(writer_limit or 1, writer_cap, PLATFORM_WRITERS) - outstanding)


@dataclass(frozen=True)
class WriterSlots:
    """What every view shows as free writer slots: exactly what create_task would admit now."""

    free: int  # a dispatch without writer_limit
    with_limit: int  # a dispatch with writer_limit=limit (each in its own "required" worktree)
    limit: int  # the largest writer_limit that counts here

    def describe(self) -> str:
        if self.with_limit == self.free:
            return f"free writer slots: {self.free}"
        return (
            f"free writer slots: {self.free} without writer_limit; {self.with_limit} with writer_limit={self.limit} "
            '(workspace="required", non-overlapping writable globs)'
        )


def writer_slots(outstanding: int, writer_cap: int) -> WriterSlots:
    limit = min(writer_cap, PLATFORM_WRITERS)
    return WriterSlots(room(outstanding, None, writer_cap), room(outstanding, limit, writer_cap), limit)


def _over_cap(claims: list[Claim], writer_limit: int | None, writer_cap: int) -> OwnershipConflict:
    cap = min(writer_limit or 1, writer_cap, PLATFORM_WRITERS)
    limit = min(writer_cap, PLATFORM_WRITERS)
    if writer_limit is None and limit > len(claims):
        way = f"the plan declared no writer_limit, so one writer; to add writers use {PARALLEL_WAY} (at most {limit})"
    elif cap < limit:
        way = f"writer_limit {writer_limit} is reached; the plan may declare up to {limit}"
    else:
        way = f"this project allows {writer_cap} (HANDOFF_WRITER_CAP) and the platform {PLATFORM_WRITERS}"
    return _refuse(f"{len(claims)} implementation writers are outstanding and the cap is {cap}: {way}", claims)


def check_dispatch(
    kind: Kind, scope: Scope, read_claims: Callable[[], list[Claim]], writer_limit: int | None, writer_cap: int
) -> None:
    """Refuse a dispatch that would break single-writer ownership.

    A read-only task naming no artifacts and no resources never conflicts, so its dispatch never
    reads the claims: that read costs a stat per task of every active change, the one part of a
    dispatch that grows with history.
    """
    if kind != "implementation" and not scope.artifacts and not scope.resources:
        return
    every = read_claims()
    _check_resources(scope, every)
    if kind != "implementation":
        _check_artifacts(scope.artifacts, every, Budget())
    else:
        _check_writer(scope, every, writer_limit, writer_cap)


def _check_writer(scope: Scope, every: list[Claim], writer_limit: int | None, writer_cap: int) -> None:
    budget = Budget()  # the whole check runs under the state-root lock: bound it
    readers = [c for c in every if not c.writer]
    if (held := _first_held(scope.writable, readers, budget)) is not None:
        raise _refuse(
            f"writable {held[1]!r} overlaps {held[2]!r}, an artifact of a read-only task (both cover {held[3]!r}); "
            "leave that path out",
            [held[0]],
        )
    claims = [c for c in every if c.writer]
    if scope.workspace == "current" and (current := [c for c in claims if c.workspace == "current"]):
        raise _refuse(
            "the current workspace already has an outstanding implementation writer, and it holds one writer "
            f"whatever the globs; to write in parallel use {PARALLEL_WAY}",
            current,
        )
    for claim in claims:
        if (hit := _first_overlap(scope.writable, claim.writable, budget)) is not None:
            raise _refuse(
                f"writable {hit[0]!r} overlaps {hit[1]!r} (both cover {hit[2]!r}); to write beside it, give this "
                "task writable globs that leave that path out",
                [claim],
            )
        _check_shared(scope, claim, budget)
    if room(len(claims), writer_limit, writer_cap) == 0:
        raise _over_cap(claims, writer_limit, writer_cap)


def _check_shared(scope: Scope, claim: Claim, budget: Budget) -> None:
    """A shared path has one owner across every claim: another's shared path is not ours to write,
    and a path we declare shared is not written by another."""
    mine = {(s.path, s.owner) for s in scope.shared}
    for path, owner in mine:
        clash = [(p, o) for p, o in claim.shared if o != owner and overlap(path, p, budget) is not None]
        if clash:
            raise _refuse(f"shared path {path!r} is owned by {clash[0][1]!r}, not {owner!r}", [claim])
        if (hit := _first_overlap([path], claim.writable, budget)) is not None:
            raise _refuse(f"shared path {path!r} is written by another task ({hit[1]!r} covers {hit[2]!r})", [claim])
    theirs = [p for p, o in claim.shared if (p, o) not in mine]
    if (hit := _first_overlap(scope.writable, theirs, budget)) is not None:
        raise _refuse(f"writable {hit[0]!r} reaches {hit[1]!r}, a shared path another task owns", [claim])


def _check_resources(scope: Scope, claims: list[Claim]) -> None:
    """A named resource is exclusive; a claim that holds the whole workspace (its TASK unreadable, or
    not the one published) holds every resource too: what it was published with is unknown."""
    for claim in claims:
        held = set(scope.resources) if claim.unreadable or claim.held_because else set(claim.resources)
        if taken := sorted(set(scope.resources) & held):
            raise _refuse(
                f"resource {taken[0]!r} is held by another task (a named resource is exclusive whatever the kind); "
                "name another (e.g. another port) or wait",
                [claim],
            )


def _held_paths(claim: Claim) -> tuple[str, ...]:
    """What a claim keeps from others' artifacts: a writer's globs and shared paths, a reader's artifacts."""
    return (*claim.writable, *(path for path, _ in claim.shared), *claim.artifacts)


def _first_held(mine: tuple[str, ...], claims: list[Claim], budget: Budget) -> tuple[Claim, str, str, str] | None:
    for claim in claims:
        if mine and (hit := _first_overlap(mine, _held_paths(claim), budget)) is not None:
            return claim, *hit
    return None


def _check_artifacts(artifacts: tuple[str, ...], claims: list[Claim], budget: Budget) -> None:
    """A read-only task's artifacts overlap no writer's globs and no other task's artifacts."""
    if (hit := _first_held(artifacts, claims, budget)) is not None:
        held = "artifacts" if not hit[0].writer else "writes"
        raise _refuse(
            f"artifacts {hit[1]!r} overlap {hit[2]!r}, which another task {held} (both cover {hit[3]!r}); give this "
            "task artifacts that leave that path out",
            [hit[0]],
        )

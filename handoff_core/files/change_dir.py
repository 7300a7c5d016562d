"""A change's directory found by handle (active wins; two homes refuse), opened with its facts."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress

from handoff_core.contract.change import MONTH_RE, ChangeFacts, read_outcome
from handoff_core.contract.ids import is_change_id
from handoff_core.contract.snapshot import Entry
from handoff_core.errors import ChangeNotFound, UnsafePath
from handoff_core.files.entries import exists_dir, read_entry, try_open
from handoff_core.files.paths import check_name, open_root
from handoff_core.layout import ACTIVE_LINE, ARCHIVE, CHANGE_README, CHANGES, MAX_FILE_BYTES

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: handoff-validate never loads it
if TYPE_CHECKING:
    from handoff_core.layout import Location

__all__ = ["locate_change"]


@contextmanager
def locate_change(root: str | os.PathLike[str], change: str) -> Iterator[tuple[ChangeFacts, int]]:
    """The change's facts and an open handle on its directory (active wins; two homes refuse)."""
    check_name(change)
    with ExitStack() as stack:
        root_fd = open_root(root)
        stack.callback(os.close, root_fd)
        homes: list[tuple[Location, tuple[str, ...]]] = [("active", CHANGES)]
        archive = try_open(stack, root_fd, ARCHIVE)
        if archive is not None:
            homes.append(("archived", ARCHIVE))
            months = sorted(n for n in os.listdir(archive) if MONTH_RE.match(n) and exists_dir(archive, n))
            homes += [("archived", (*ARCHIVE, month)) for month in months]
        found = [(kind, (*parts, change)) for kind, parts in homes if try_open(stack, root_fd, (*parts, change))]
        if not found:
            raise ChangeNotFound(_not_found(change, stack, root_fd, homes))
        if len(found) > 1:
            raise UnsafePath(f"change {change!r} exists in more than one place ({found}); keep exactly one")
        kind, parts = found[0]
        fd = try_open(stack, root_fd, parts)
        assert fd is not None
        readme = read_entry(fd, CHANGE_README)
        outcome = read_outcome(readme.data.decode("utf-8", "replace")) if readme.data is not None else None
        yield ChangeFacts(change, kind, parts, outcome, _unreadable(readme)), fd


MAX_NEAREST = 3


def _not_found(change: str, stack: ExitStack, root_fd: int, homes: list[tuple[Location, tuple[str, ...]]]) -> str:
    """Why ``change`` is not found: the existing changes closest to it when there are any (a typo is
    never advised to be created), else how a change comes to exist."""
    names: set[str] = set()
    for _, parts in homes:
        with suppress(OSError):
            if (fd := try_open(stack, root_fd, parts)) is not None:
                names.update(n for n in os.listdir(fd) if is_change_id(n))
    import difflib  # here: only a change not found needs it, and it costs a validator ~1 ms to load

    nearest = difflib.get_close_matches(change, sorted(names), n=MAX_NEAREST, cutoff=0.6)
    where = "not found under specdev/changes or specdev/archive of the state root"
    if nearest:
        return f"change {change!r} {where}; the closest existing: {', '.join(nearest)}. Pass one of those"
    return (
        f"change {change!r} {where}; the server never creates a change: create "
        f"{'/'.join((*CHANGES, change, CHANGE_README))} holding the line '{ACTIVE_LINE}', or pass an existing id"
    )


def _unreadable(readme: Entry) -> str:
    if readme.oversize:
        return f"its {CHANGE_README} is over the {MAX_FILE_BYTES}-byte limit"
    if readme.kind not in ("file", "missing"):
        return f"its {CHANGE_README} is a {readme.kind}, not a regular file"
    return ""

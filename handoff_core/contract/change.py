"""Change facts: where a change lives (active or archived) and its README ``Outcome:`` line."""

from __future__ import annotations

from handoff_core.contract.markdown import split_lines
from handoff_core.contract.pattern import compile_on_use
from handoff_core.contract.record import NamedTuple
from handoff_core.contract.values import header_pair
from handoff_core.layout import OUTCOMES

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: handoff-validate never loads it
if TYPE_CHECKING:
    from handoff_core.layout import Location, Outcome

__all__ = ["MONTH_RE", "ChangeFacts", "read_outcome"]

MONTH_RE = compile_on_use(r"^[0-9]{4}-[0-9]{2}\Z")  # older installs archive under specdev/archive/YYYY-MM/


class ChangeFacts(NamedTuple):  # a tuple: held verdicts compare it once per task, at C speed
    change: str
    location: Location
    parts: tuple[str, ...]  # directory components below the state root
    outcome: Outcome | None  # None when the README has no single valid Outcome line
    unreadable: str = ""  # why its README cannot be read (over the size limit, not a regular file); "" when it can


def read_outcome(readme: str) -> Outcome | None:
    """The one ``Outcome:`` value, or None when it is missing, repeated or unknown."""
    # One leading BOM is the file's encoding mark, as the seed's reader takes it.
    pairs = [header_pair(line) for line in split_lines(readme.removeprefix("\ufeff")) if line.startswith("Outcome:")]
    values = [pair[1] for pair in pairs if pair is not None]
    return OUTCOMES[OUTCOMES.index(values[0])] if len(values) == 1 and values[0] in OUTCOMES else None

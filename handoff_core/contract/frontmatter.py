"""YAML read strictly (duplicate keys refused) and written with every string quoted."""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType

from handoff_core.contract.markdown import small_text_cache, split_lines
from handoff_core.contract.pattern import compile_on_use
from handoff_core.errors import InvalidContent

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: handoff-validate never loads it
if TYPE_CHECKING:
    from typing import Any

__all__ = ["load_yaml", "plain_frontmatter", "quote", "split_frontmatter"]

_PLAIN_LINE = re.compile(r'^([a-z_]+): (?:"([ !#-\[\]-~]*)"|(0|[1-9][0-9]{0,8})|(\[[ !#-\[\]-~"]*\]))$')


_YAML_WORDS = frozenset({"y", "n", "yes", "no", "on", "off", "true", "false", "null"})  # keys YAML 1.1 retypes


def _strings_only(value: object) -> bool:
    """A list of strings, or of mappings to strings and whole numbers (never a float or a boolean, which
    the two spell apart): JSON and YAML read these alike."""
    return isinstance(value, list) and all(
        isinstance(item, str)
        or (isinstance(item, dict) and all(isinstance(v, str) or type(v) is int for v in item.values()))
        for item in value
    )


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A flow mapping as YAML reads it: a key given twice is refused (JSON would keep the last)."""
    mapping = dict(pairs)
    if len(mapping) != len(pairs):
        raise ValueError("a key given twice")
    return mapping


def _fast_mapping(text: str) -> dict[str, Any] | None:
    """Lines exactly as ``quote`` writes printable ASCII, read without a YAML parser.

    ``key: "text"``, ``key: 12`` and ``key: ["a", {"k": "v"}]``. Anything else, or a key given
    twice, returns None and goes through the strict YAML loader, which reads such lines alike.
    """
    fields: dict[str, Any] = {}
    for line in text.split("\n"):
        match = _PLAIN_LINE.match(line)
        if match is None or match.group(1) in fields or match.group(1) in _YAML_WORDS:
            return None
        key, string, number, flow = match.groups()
        if flow is not None:
            import json  # here: a check whose frontmatter has no list never loads it

            try:
                value = json.loads(flow, object_pairs_hook=_unique_pairs)
            except ValueError:
                return None
            if not _strings_only(value):
                return None
            fields[key] = value
        else:
            fields[key] = string if string is not None else int(number)
    return fields


def load_yaml(text: str, what: str) -> Any:
    if (fast := _fast_mapping(text)) is not None:
        return fast
    # Here only: what this server renders takes the fast path, so handoff-validate starts without PyYAML.
    from handoff_core.contract.strict_yaml import load_strict

    return load_strict(text, what)


_PRINTABLE_ASCII = range(0x20, 0x7F)
_ONE_BYTE, _TWO_BYTES = 0xFF, 0xFFFF  # the largest code point YAML's \x and \u escapes spell


def _quote_text(value: str) -> str:
    out = []
    for char in value:
        code = ord(char)
        if char in '"\\':
            out.append("\\" + char)
        elif code in _PRINTABLE_ASCII:
            out.append(char)
        else:  # YAML's own escapes: \xXX, \uXXXX and \UXXXXXXXX (JSON's surrogate pairs are not YAML)
            out.append(
                f"\\x{code:02x}" if code <= _ONE_BYTE else f"\\u{code:04x}" if code <= _TWO_BYTES else f"\\U{code:08x}"
            )
    return '"' + "".join(out) + '"'


def quote(value: object) -> str:
    """A YAML value that reads back as exactly ``value`` (no ``no``/``1e3``/date surprises)."""
    if isinstance(value, str):
        return _quote_text(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(quote(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{quote(key)}: {quote(item)}" for key, item in value.items()) + "}"
    import json

    return json.dumps(value)


@small_text_cache  # validation, status and parsing read the same TASK in a row
def split_frontmatter(text: str) -> tuple[Mapping[str, Any], str]:
    """``(fields, body)`` of a document that opens with a ``---`` block; the fields are read-only."""
    lines = split_lines(text)  # the caller has taken off one encoding BOM, as the seed's reader does
    if not lines or lines[0] != "---":
        raise InvalidContent("TASK must open with a '---' YAML frontmatter line")
    try:
        end = lines.index("---", 1)
    except ValueError:
        raise InvalidContent("TASK frontmatter is never closed with '---'") from None
    fields = load_yaml("\n".join(lines[1:end]), "TASK frontmatter")
    if not isinstance(fields, dict):
        raise InvalidContent("TASK frontmatter must be a YAML mapping of key: value lines")
    return MappingProxyType(fields), "\n".join(lines[end + 1 :])


def plain_frontmatter(text: str) -> dict[str, Any] | None:
    """The fields ``split_frontmatter`` reads from ``text``, when its block is plain: ``---`` lines
    ending in LF, and ``key: "text"`` or ``key: 12`` lines as ``quote`` writes them. None: ask
    ``split_frontmatter``. A cold status reads thousands of TASKs for their kind and ids alone:
    this is one regex match and one pass, without splitting and joining the body.
    """
    block = _PLAIN_BLOCK.match(text)
    if block is None:
        return None
    pairs = _PLAIN_PAIR.findall(block.group(1))
    fields = {key: int(number) if number else string for key, string, number in pairs}
    if len(fields) != len(pairs) or not _YAML_WORDS.isdisjoint(fields):
        return None  # a key given twice, or one YAML 1.1 retypes: the strict loader says what it is
    return fields


_PAIR = r'([a-z_]+): (?:"([ !#-\[\]-~]*)"|(0|[1-9][0-9]{0,8}))'
_PLAIN_PAIR = compile_on_use(f"^{_PAIR}$", re.M)
_PLAIN_BLOCK = compile_on_use(f"---\n((?:{_PAIR}\n)+)---\n")  # the first "---" line closes the block

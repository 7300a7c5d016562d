"""YAML read strictly (duplicate keys refused) and written with every string quoted."""

from __future__ import annotations

import json
from typing import Any

import yaml

from handoff_core.errors import InvalidContent
from handoff_core.markdown import split_lines

_BaseLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _StrictLoader(_BaseLoader):  # type: ignore[misc,valid-type]
    """SafeLoader that refuses a key given twice instead of keeping the last one."""


def _mapping(loader: yaml.SafeLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


def load_yaml(text: str, what: str) -> Any:
    try:
        return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise InvalidContent(f"{what} is not valid YAML ({exc}); fix it or render it again") from exc


def quote(value: object) -> str:
    """A YAML scalar that reads back as exactly ``value`` (no ``no``/``1e3``/date surprises)."""
    return json.dumps(value, ensure_ascii=True)


def split_frontmatter(text: str) -> tuple[dict[str, Any], str]:
    """``(fields, body)`` of a document that opens with a ``---`` block."""
    lines = split_lines(text.removeprefix("\ufeff"))
    if not lines or lines[0] != "---":
        raise InvalidContent("TASK must open with a '---' YAML frontmatter line")
    try:
        end = lines.index("---", 1)
    except ValueError:
        raise InvalidContent("TASK frontmatter is never closed with '---'") from None
    fields = load_yaml("\n".join(lines[1:end]), "TASK frontmatter")
    if not isinstance(fields, dict):
        raise InvalidContent("TASK frontmatter must be a YAML mapping of key: value lines")
    return fields, "\n".join(lines[end + 1 :])

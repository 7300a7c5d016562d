"""PyYAML, read strictly: duplicate and non-scalar keys refused, plain scalars as YAML 1.2's core schema.

Imported by ``frontmatter`` only for text its fast path cannot read.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from handoff_core.errors import InvalidContent

__all__ = ["load_strict"]

_BaseLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _StrictLoader(_BaseLoader):  # type: ignore[misc,valid-type]
    """SafeLoader that refuses a key given twice instead of keeping the last one."""


def _mapping(loader: yaml.SafeLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if isinstance(key, list | dict):  # ``? [a, b]``: no field name, and unhashable besides
            raise yaml.constructor.ConstructorError(None, None, "a key must be a plain value", key_node.start_mark)
        if key in seen:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)

# YAML 1.2 core schema, as the seed's js-yaml reads plain scalars: ``yes``, ``on``, ``1:20``,
# ``1_000`` and ``2026-11-30`` stay strings (PyYAML's YAML 1.1 would make booleans, numbers, dates).
_StrictLoader.yaml_implicit_resolvers = {}
for _tag, _pattern, _first in (
    ("bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    ("int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", "-+0123456789"),
    (
        "float",
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        "-+0123456789.",
    ),
    ("null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
):
    _StrictLoader.add_implicit_resolver(f"tag:yaml.org,2002:{_tag}", re.compile(_pattern), list(_first))


def _core_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int:
    text = str(loader.construct_scalar(node))
    sign, digits = (-1, text[1:]) if text.startswith("-") else (1, text.removeprefix("+"))
    prefixed = {"0o": 8, "0x": 16}.get(digits[:2])
    # "010" is ten here, as in YAML 1.2
    return sign * (int(digits[2:], prefixed) if prefixed else int(digits, 10))


_StrictLoader.add_constructor("tag:yaml.org,2002:int", _core_int)


def load_strict(text: str, what: str) -> Any:
    try:
        return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise InvalidContent(f"{what} is not valid YAML ({exc}); fix it or render it again") from exc

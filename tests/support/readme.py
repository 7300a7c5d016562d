"""The README's regions and fenced examples, filled for this clone."""

from __future__ import annotations

import re
from pathlib import Path


def region(name: str) -> str:
    text = README.read_text()
    return text[text.index(f"<!-- {name}:start -->") : text.index(f"<!-- {name}:end -->")]


FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


CLONE = "/path/to/handoff-mcp"  # how the README names this clone


def filled(text: str, values: dict[str, str]) -> str:
    for placeholder, value in values.items():
        text = re.sub(rf"\b{placeholder}\b", value, text)
    return text


ROOT = Path(__file__).resolve().parents[2]


README = ROOT / "README.md"

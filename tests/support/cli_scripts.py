"""The installed ``handoff-mcp`` command beside this interpreter."""

from __future__ import annotations

import sys
from pathlib import Path

SCRIPT = Path(sys.executable).parent / "handoff-mcp"

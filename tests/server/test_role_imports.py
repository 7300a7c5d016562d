"""An executor's tools/list waits only for the modules of its own tools, not for the Lead's."""

from __future__ import annotations

import subprocess
import sys

LEAD_MODULES = ("coordination", "exchange", "lead", "writer")
PROBE = """
import sys
from server.mcp.app import role_tools
names = [t.name for t in role_tools(sys.argv[1])]
print(len(names), *sorted(m for m in sys.modules if m.startswith("server.mcp.tools.")))
"""


def _listed_with_modules(role: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", PROBE, role], capture_output=True, text=True, timeout=60, check=True)
    return done.stdout.split()


def test_an_executor_builds_its_tools_without_importing_the_lead_tool_modules() -> None:
    count, *modules = _listed_with_modules("executor")
    assert int(count) == 8
    assert not {f"server.mcp.tools.{name}" for name in LEAD_MODULES} & set(modules)


def test_a_lead_builds_its_tools_from_every_tool_module() -> None:
    count, *modules = _listed_with_modules("lead")
    assert int(count) == 20
    assert {f"server.mcp.tools.{name}" for name in LEAD_MODULES} <= set(modules)

"""A server's tools/list waits only for the modules of its own tools, not for the Lead's, and not for
the core services the tools' bodies call."""

from __future__ import annotations

import subprocess
import sys

import pytest

LEAD_MODULES = ("coordination", "exchange", "lead", "writer")
PROBE = """
import sys
from server.mcp.app import role_tools
names = [t.name for t in role_tools(sys.argv[1])]
print(len(names), *sorted(m for m in sys.modules if m.startswith(("server.mcp.tools.", "handoff_core.services."))))
"""
# The services whose import is most of a tool body's first call: a tools/list answer never waits for them.
CALLED_SERVICES = (
    "handoff_core.services.acceptance.verification",
    "handoff_core.services.evidence.audit",
    "handoff_core.services.exchange.outbound",
    "handoff_core.services.tree.queries",
    "handoff_core.services.views.status_view",
    "handoff_core.services.writing.store",
)


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


@pytest.mark.parametrize("role", ["lead", "executor"])
def test_a_server_builds_its_tools_without_importing_the_services_their_bodies_call(role: str) -> None:
    _, *modules = _listed_with_modules(role)
    assert not set(CALLED_SERVICES) & set(modules)

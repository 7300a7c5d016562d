from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from handoff_core.contract.scope import Scope
from handoff_core.contract.task import TaskBody
from handoff_core.services.store import Store, TaskRequest

CHANGE = "2026-11-30-demo"

# Same examples on every run (no example database, derandomized), and no per-example deadline:
# a loaded CI machine must not turn a slow example into a failure.
settings.register_profile("handoff", derandomize=True, database=None, deadline=None)
settings.load_profile("handoff")

# The seed documents, where CI lays them out: /path/clone beside /path/shared.
SEEDS = Path(__file__).resolve().parents[1].parent / "shared" / "seeds"


@pytest.fixture(scope="session")
def seeds() -> Path:
    """The seeds directory; a test that needs it is skipped without it, except on CI, where it fails."""
    if not SEEDS.is_dir():
        missing = f"the seed documents are not in {SEEDS} (../shared/seeds from the repository root)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{missing}: lay shared/ beside the clone")
        pytest.skip(missing)
    return SEEDS


@pytest.fixture(autouse=True, scope="session")
def private_cache_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Servers started by the tests (subprocesses too) keep their disk cache here, not in ~/.cache."""
    home = tmp_path_factory.mktemp("xdg-cache")
    os.environ["XDG_CACHE_HOME"] = str(home)
    return home


def make_change(state_root: Path, change: str = CHANGE, outcome: str = "active") -> Path:
    path = state_root / "specdev" / "changes" / change
    path.mkdir(parents=True)
    (path / "README.md").write_text(f"# {change}\n\nOutcome: {outcome}\n")
    return path


def implementation(topic: str = "implement-a1", **overrides: object) -> TaskRequest:
    fields: dict[str, Any] = {
        "change": CHANGE,
        "topic": topic,
        "kind": "implementation",
        "goal": "Lead: main session. Executor implements A1 so that `pytest tests/a1` passes.",
        "inputs": "- SPEC.md section A1\n- decision: keep the public API",
        "scope": Scope("current", ("src/a1/**",), ("docs/**",)),
        "acceptance": "`pytest tests/a1 -q` exits 0.",
    }
    fields.update(overrides)
    keys = ("change", "topic", "session", "force_new", "writer_limit", "retry_of")
    request = {key: fields.pop(key) for key in keys if key in fields}
    return TaskRequest(body=TaskBody(**fields), **request)


def review(topic: str = "review-a1", **overrides: object) -> TaskRequest:
    base = {"kind": "review", "scope": Scope(None, (), ("src/**",), (), (".pytest_cache/**",))}
    return implementation(topic, **{**base, **overrides})


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    make_change(root / "speculo" / ".speculo")
    return root


@pytest.fixture
def state_root(project: Path) -> Path:
    return project / "speculo" / ".speculo"


@pytest.fixture
def store(project: Path, state_root: Path) -> Store:
    return Store(state_root, project)

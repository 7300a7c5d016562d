from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from hypothesis import settings

from bench.loopback import loopback_listener, served
from handoff_core.services.capabilities.tokens import lead_token, load_secret
from handoff_core.services.writing.store import Store
from server.config import Settings
from server.web.auth import Endpoint
from server.web.team import team_app
from tests.support import leftovers
from tests.support.changes import make_change
from tests.support.gitrepo import git, make_repo
from tests.support.remote import Elsewhere
from tests.support.team import Team

_ADOPTING = pytest.StashKey[bool]()  # whether this run adopts orphans, to find what tests leave behind

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
    """Servers started by the tests (subprocesses too) keep their cache (session endings, TASK copies)
    here, not in ~/.cache, and their token secret here, not in ~/.config: a secret one test made never
    judges another's tree."""
    home = tmp_path_factory.mktemp("xdg-cache")
    os.environ["XDG_CACHE_HOME"] = str(home)
    os.environ["XDG_CONFIG_HOME"] = str(tmp_path_factory.mktemp("xdg-config"))
    return home


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


# The HTTP team server (the Lead's), served on loopback for a test; and a clone elsewhere, as an executor's machine.
@pytest.fixture
async def team(project: Path, state_root: Path, secret_file: Path) -> AsyncIterator[Team]:
    listener = loopback_listener()
    endpoint = Endpoint("127.0.0.1", listener.getsockname()[1])
    app = team_app(
        Settings(role="lead", project_root=project, state_root=state_root, secret_file=secret_file), endpoint
    )
    async with served(app, listener):
        yield Team(endpoint, lead_token(load_secret(secret_file), state_root), state_root)


@pytest.fixture
def elsewhere(tmp_path: Path, project: Path) -> Elsewhere:
    make_repo(project)  # the Lead's repository; its handoff tree is ignored, so no clone holds it
    bare = tmp_path / "shared.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    git(project, "remote", "add", "origin", str(bare))
    git(project, "push", "-q", "-u", "origin", "main")
    home = tmp_path / "elsewhere"
    home.mkdir()
    git(home, "clone", "-q", str(bare), "clone")
    return Elsewhere(home, home / "clone", bare)


def pytest_sessionstart(session: pytest.Session) -> None:
    session.config.stash[_ADOPTING] = leftovers.adopt_orphans()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A test run that leaves a process behind fails, naming it (and stops it)."""
    if not session.config.stash.get(_ADOPTING, False):
        return
    left = leftovers.left_behind()
    if not left:
        return
    leftovers.stop(left)
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    lines = "\n".join(f"  {pid}: {command}" for pid, command in sorted(left.items()))
    if reporter is not None:
        reporter.write_sep("=", "processes left behind by the tests (now killed)", red=True)
        reporter.write_line(lines)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED

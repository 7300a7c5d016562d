"""The repository's git remotes, read from its config where that is plain."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from handoff_core.services.evidence.remotes import remote_names
from tests.support.gitrepo import ENV, git, make_repo


def sh(cwd: Path, line: str) -> None:
    done = subprocess.run(
        ["bash", "-c", line], cwd=cwd, env=ENV, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr


REMOTE_FORMS = {
    "none": "true",
    "config": "git remote add origin ../elsewhere.git",
    "included": "printf '[remote \"origin\"]\\n\\turl = ../elsewhere.git\\n' > extra.cfg"
    " && git config include.path ../extra.cfg",
    "legacy file": "mkdir -p .git/remotes && printf 'URL: ../elsewhere.git\\n' > .git/remotes/old",
    "branch names one": "git config branch.main.remote origin",
}


@pytest.mark.parametrize("form", sorted(REMOTE_FORMS))
def test_the_remotes_read_from_the_config_are_gits_own_answer_or_git_is_asked(project: Path, form: str) -> None:
    make_repo(project)
    sh(project, REMOTE_FORMS[form])
    listed = [name for name in git(project, "remote").stdout.splitlines() if name]
    found = remote_names(project)
    assert found == listed if form == "none" else found is None, (found, listed)

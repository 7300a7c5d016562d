"""verify_task: a task's acceptance checks replayed at its reported checkpoint in a throwaway copy,
under the replay's kernel sandbox; real repositories, real worktrees, real pytest runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.requests import review
from handoff_core.contract.anchor import TASK_CHANGED
from handoff_core.contract.checks import Check
from handoff_core.layout import TASK_FILE
from handoff_core.services.acceptance.verification import NO_CHECKS, verify_task
from handoff_core.services.views.status_view import TaskFacts, task_facts
from tests.support.calc import PYTEST, RIGHT_FILES, TEST, Calc, make_calc, pids_running
from tests.support.gitrepo import git, write

pytestmark = pytest.mark.slow


@pytest.fixture
def calc(project: Path, state_root: Path, tmp_path: Path) -> Calc:
    return make_calc(project, state_root, tmp_path / "config" / "secret")


def all_facts(calc: Calc) -> list[TaskFacts]:
    return [task_facts(s, 0.0, queries=calc.store.queries) for s in calc.store.queries.status()]


def facts_of(calc: Calc) -> TaskFacts:
    (facts,) = all_facts(calc)
    return facts


def tree_state(path: Path) -> str:
    return git(path, "status", "--porcelain", "--ignored", "-uall").stdout


def test_a_task_whose_work_passes_is_verified_and_status_shows_it(calc: Calc) -> None:
    ref = calc.dispatch()
    checkpoint = calc.work(ref, RIGHT_FILES, verification=f"`{PYTEST}`: exit 0")
    before = (tree_state(calc.project), tree_state(calc.tree(ref)))
    found = verify_task(calc.store.queries, ref, str(calc.secret))
    assert (found.verdict, found.flags, found.replayed) == ("passed", (), f"checkpoint {checkpoint}"), found
    (check,) = found.checks
    assert (check.exit_code, check.why, check.claimed) == (0, "", True)
    assert "1 passed" in check.tail
    assert found.recorded
    assert (tree_state(calc.project), tree_state(calc.tree(ref))) == before  # nothing in the project changed
    facts = facts_of(calc)
    assert (facts.verification, facts.attention) == ("passed", "")


def test_a_report_claiming_a_pass_its_checkpoint_fails_is_flagged(calc: Calc) -> None:
    ref = calc.dispatch()
    calc.work(ref, {"src/calc/__init__.py": "def add(a, b):\n    return a * b\n"}, f"`{PYTEST}`: exit 0, 1 passed")
    found = verify_task(calc.store.queries, ref, str(calc.secret))
    assert found.verdict == "failed"
    (check,) = found.checks
    assert (check.exit_code, check.why, check.claimed) == (1, "exited 1", True)
    assert "1 failed" in check.tail
    assert found.flags == (f"the REPORT claims `{PYTEST}` passed; on replay it exited 1",)
    facts = facts_of(calc)
    assert facts.verification == "failed"
    assert facts.attention.startswith("verification failed: 1 of 1 check(s) failed on replay")
    assert "(the REPORT claims it passed)" in facts.attention


def test_a_report_that_says_its_check_failed_claims_nothing(calc: Calc) -> None:
    ref = calc.dispatch()
    calc.work(ref, {"src/calc/__init__.py": "def add(a, b):\n    return 0\n"}, f"`{PYTEST}`: exit 1, 1 failed")
    found = verify_task(calc.store.queries, ref, str(calc.secret))
    assert (found.verdict, found.flags, found.checks[0].claimed) == ("failed", (), False)


def test_a_task_that_edited_the_test_it_was_asked_to_pass_changed_what_judges_it(calc: Calc) -> None:
    ref = calc.dispatch(writable=("src/**", "tests/**"))  # the test is in its scope: still its judge
    calc.work(ref, {"tests/test_calc.py": TEST.replace("== 5", "== -1")}, f"`{PYTEST}`: exit 0")
    found = verify_task(calc.store.queries, ref, str(calc.secret))
    assert found.checks[0].why == ""  # the edited test passes against the wrong code
    assert found.verdict == "unknown"
    assert "the task changed what judges them" in found.reason
    assert found.flags == ("changed what judges its checks: tests/test_calc.py (a test file)",)
    assert facts_of(calc).attention.startswith("verification unknown: every check (1) passed")


def test_a_test_edited_outside_the_scope_is_flagged_as_both(calc: Calc) -> None:
    ref = calc.dispatch()
    calc.work(ref, {"tests/test_calc.py": TEST.replace("== 5", "== -1")})
    found = verify_task(calc.store.queries, ref, str(calc.secret))
    assert found.verdict == "unknown"
    assert found.flags[0].startswith("changed tests/test_calc.py outside its scope (")
    assert found.flags[1] == "changed what judges its checks: tests/test_calc.py (a test file)"


def test_a_check_that_loops_forever_is_stopped_at_its_timeout_with_every_process_it_started(calc: Calc) -> None:
    marker = "4242.5"  # a sleep left running in the background: the sweep must take it too
    ref = calc.dispatch(Check(f"(sleep {marker} &) ; setsid sleep {marker} & while :; do :; done", timeout_s=2))
    calc.work(ref, RIGHT_FILES)
    found = verify_task(calc.store.queries, ref, str(calc.secret))
    (check,) = found.checks
    assert found.verdict == "failed"
    assert check.exit_code is None
    assert check.why == "timed out after 2 s: stopped, with every process it started"
    assert 2.0 <= check.seconds < 10.0
    assert pids_running(f"sleep {marker}") == []


def test_a_check_that_writes_outside_its_scratch_copy_is_denied(calc: Calc) -> None:
    outside = calc.project / "escaped.txt"
    tree_file = "src/calc/__init__.py"
    ref = calc.dispatch(Check(f"echo escaped > {outside}"), Check(f"echo x >> {tree_file} && cat {calc.secret}"))
    tree = calc.tree(ref)
    calc.work(ref, RIGHT_FILES)
    found = verify_task(calc.store.queries, ref, str(calc.secret))
    first, second = found.checks
    assert found.verdict == "failed"
    assert first.exit_code != 0
    assert "Permission denied" in first.tail
    assert not outside.exists()
    assert "Permission denied" in second.tail  # the copy is writable; the Lead's secret is not readable
    assert "lead-secret" not in second.tail
    assert (tree / tree_file).read_text() == RIGHT_FILES[tree_file]  # the worktree itself is untouched


def test_a_current_task_is_replayed_on_the_tree_as_returned_and_the_tree_is_left_as_it_was(calc: Calc) -> None:
    ref = calc.current()
    write(calc.project, "src/calc/__init__.py", RIGHT_FILES["src/calc/__init__.py"])  # uncommitted: as returned
    write(calc.project, "src/calc/extra.py", "VALUE = 1\n")  # untracked, not ignored: copied too
    calc.returned(ref)
    before = tree_state(calc.project)
    found = verify_task(calc.store.queries, ref, str(calc.secret))
    assert found.verdict == "passed", found
    assert found.replayed.startswith("the project tree as returned (HEAD ")
    assert tree_state(calc.project) == before


def test_a_task_changed_since_dispatch_runs_no_check(calc: Calc) -> None:
    ref = calc.dispatch()
    calc.work(ref, RIGHT_FILES)
    path = calc.store.roots.task_dir(ref) / TASK_FILE
    data = path.read_bytes().replace(b"-p no:cacheprovider tests", b"-p no:cacheprovider --co")
    path.chmod(0o644)
    path.write_bytes(data)
    found = verify_task(calc.store.queries, ref, str(calc.secret))
    assert (found.verdict, found.reason, found.checks) == ("unknown", TASK_CHANGED, ())


def test_a_task_without_a_report_or_without_checks_is_not_replayed_and_nothing_is_kept(calc: Calc) -> None:
    ref = calc.dispatch()
    found = verify_task(calc.store.queries, ref, str(calc.secret))
    assert (found.verdict, found.reason, found.recorded) == ("unknown", "no REPORT yet: nothing to verify", False)
    plain = calc._create(review())  # no acceptance_checks
    calc.returned(plain)
    found = verify_task(calc.store.queries, plain, str(calc.secret))
    assert (found.verdict, found.reason, found.recorded) == ("unknown", NO_CHECKS, False)
    assert [f.verification for f in all_facts(calc)] == ["", ""]


def test_a_checkpoint_that_is_not_a_commit_here_is_unknown(calc: Calc) -> None:
    ref = calc.dispatch()
    calc.returned(ref, checkpoint="0" * 40)
    found = verify_task(calc.store.queries, ref, str(calc.secret))
    assert found.verdict == "unknown"
    assert found.checks == ()
    assert found.recorded


def test_a_check_folder_that_leads_out_of_the_copy_through_a_link_is_not_run(calc: Calc, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    ref = calc.dispatch(Check("touch ran", cwd="src/out"))
    (calc.tree(ref) / "src" / "out").symlink_to(elsewhere)  # committed as a link: the copy holds it too
    calc.work(ref, RIGHT_FILES)
    found = verify_task(calc.store.queries, ref, str(calc.secret))
    (check,) = found.checks
    assert (found.verdict, check.exit_code) == ("failed", None)
    assert check.why == "not run: src/out is not a folder of the replayed tree"
    assert list(elsewhere.iterdir()) == []

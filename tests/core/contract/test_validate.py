"""The validator agrees with the seed's validate-handoff.mjs on every tree below.

Each case is a valid tree mutated one way; ``expect`` is the message the seed stops with (the
seed's own wording where it has one) or None where the seed passes the tree. The verdict must
match; the seed's message must be among ours (ours collects every problem, the seed stops at one).
With HANDOFF_SEED_VALIDATOR set to a runnable copy of the seed validator (``node …/validate-handoff.mjs``),
every tree is also run through it and its exit code must equal our verdict.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from bench.requests import implementation, report_of
from handoff_core.contract.ids import Ref
from handoff_core.contract.proof import signing_key
from handoff_core.contract.validate import check_handoff
from handoff_core.errors import InvalidContent
from handoff_core.files.publishing import new_temp_name
from handoff_core.services.writing.store import Store
from handoff_core.validator import arguments
from tests.support.changes import CHANGE, make_change

Edit = Callable[[str], str]
SEED = os.environ.get("HANDOFF_SEED_VALIDATOR", "")  # e.g. "node /path/to/validate-handoff.mjs"


@dataclass(frozen=True)
class Tree:
    store: Store
    ref: Ref

    @property
    def task_dir(self) -> Path:
        return self.store.roots.task_dir(self.ref)

    @property
    def change_dir(self) -> Path:
        return self.store.roots.state_root / "specdev" / "changes" / CHANGE


@dataclass(frozen=True)
class Case:
    name: str
    stage: str
    expect: str | None
    task: Edit | None = None
    report: bool = False
    report_edit: Edit | None = None
    status: str = "completed"
    tree: Callable[[Tree], object] | None = None  # what it returns is not used
    ids: dict[str, str] = field(default_factory=dict)


def sub(old: str, new: str, count: int = 1) -> Edit:
    def edit(text: str) -> str:
        assert old in text, old
        return text.replace(old, new, count)

    return edit


def regex(pattern: str, new: str) -> Edit:
    return lambda text: re.sub(pattern, new, text, count=1, flags=re.MULTILINE)


def rewrite(path: Path, edit: Edit) -> None:
    path.chmod(0o644)
    path.write_text(edit(path.read_text()))


def put(name: str, content: str | bytes) -> Callable[[Tree], None]:
    def apply(tree: Tree) -> None:
        target = tree.task_dir / name
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content)

    return apply


def locator(value: object) -> Callable[[Tree], None]:
    return put("session-locator.json", json.dumps(value))


def archive(under: str) -> Callable[[Tree], None]:
    def apply(tree: Tree) -> None:
        target = tree.store.roots.state_root / "specdev" / "archive" / under / CHANGE
        target.parent.mkdir(parents=True, exist_ok=True)
        tree.change_dir.rename(target)

    return apply


def outcome(value: str) -> Callable[[Tree], object]:
    return lambda tree: (tree.change_dir / "README.md").write_text(f"# demo\n\nOutcome: {value}\n")


def symlinked(level: str) -> Callable[[Tree], None]:
    def apply(tree: Tree) -> None:
        real = tree.task_dir if level == "task" else tree.task_dir.parent
        moved = real.with_name(real.name + ".real")
        real.rename(moved)
        real.symlink_to(moved.name)

    return apply


def second_entry(name: str) -> Callable[[Tree], None]:
    return lambda tree: (tree.task_dir.parent / name).mkdir()


def task_is_directory(tree: Tree) -> None:
    (tree.task_dir / "TASK.md").unlink()
    (tree.task_dir / "TASK.md").mkdir()


def remove(name: str) -> Callable[[Tree], None]:
    return lambda tree: (tree.task_dir / name).unlink()


def remove_round(tree: Tree) -> None:
    round_dir = tree.task_dir.parent
    round_dir.rename(round_dir.with_name("20200101T000000Z"))


GOOD_LOCATORS = [
    "/home/me/.claude/projects/x/0b1c.jsonl",
    r"C:\Users\me\log.jsonl",
    "C:/Users/me/log.jsonl",
    r"\\host\share\log.jsonl",
]
PLACEHOLDER = "path: placeholder or empty locator"
NOT_ABSOLUTE = "path must be an absolute file path"

SIGNING_TOKEN = "corpus-token-aaaaaaaaaaaaaaaaaaa"


def signed_report(tree: Tree) -> None:
    """A REPORT signed as write_report signs it (a ``Signature:`` header line the seed ignores)."""
    focused = "Did the work. Kept the API. Stopped after tests. Next: review."
    report = report_of(
        tree.ref, status="completed", focused=focused, artifacts="src/a1/x.py", verification="pytest: exit 0"
    )
    tree.store.write_report(report, tree.ref.change, token=SIGNING_TOKEN)


CASES = [
    # -- trees the seed passes --------------------------------------------------------------
    Case("fresh dispatch", "dispatch", None),
    Case("returned report", "return", None, report=True),
    Case(
        "signed report",
        "return",
        None,
        task=lambda t: f"{t}- Report signing key: `{signing_key(SIGNING_TOKEN)}`\n",
        tree=signed_report,
    ),
    *(Case(f"locator {p}", "return", None, report=True, tree=locator({"path": p})) for p in GOOD_LOCATORS),
    Case("locator at dispatch", "dispatch", None, tree=locator({"path": GOOD_LOCATORS[0]})),
    Case("no change key", "dispatch", None, task=regex(r"^change: .*\n", "")),
    Case("real ticket", "dispatch", None, task=sub("kind:", 'ticket: "T-01"\nkind:')),
    Case(
        "unquoted yaml values",
        "dispatch",
        None,
        task=lambda t: re.sub(r'^(session|task|kind|change): "(.*)"$', r"\1: \2", t, flags=re.M),
    ),
    Case("subheading plus text", "dispatch", None, task=sub("## Inputs\n", "## Inputs\n### Specs\n")),
    Case(
        "heading in fence and real one",
        "dispatch",
        None,
        task=sub("## Acceptance\n", "## Acceptance\n```\n## Goal\n```\n"),
    ),
    Case("completed change at return", "return", None, report=True, tree=outcome("completed")),
    Case("cancelled change at return", "return", None, report=True, tree=outcome("cancelled")),
    *(Case(f"status {s}", "return", None, report=True, status=s) for s in ("blocked", "failed", "cancelled")),
    Case(
        "extra report header",
        "return",
        None,
        report=True,
        report_edit=sub("Status:", "Captured-by: Lead\nStatus:"),
    ),
    Case("other task in round", "dispatch", None, tree=second_entry("002-other")),
    Case(
        "file entry of other number",
        "dispatch",
        None,
        tree=lambda t: (t.task_dir.parent / "notes.md").write_text("x"),
    ),
    # -- ids ------------------------------------------------------------------------------------
    Case("round suffix -1", "dispatch", "invalid orchestration session", ids={"session": "20261130T044500Z-1"}),
    Case(
        "round suffix -00",
        "dispatch",
        "invalid orchestration session",
        ids={"session": "20261130T044500Z-00"},
    ),
    Case(
        "round not a real date",
        "dispatch",
        "invalid orchestration session",
        ids={"session": "20261131T000000Z"},
    ),
    Case("task 0001", "dispatch", "invalid task sequence/topic", ids={"task": "0001-implement-a1"}),
    Case("task 000", "dispatch", "invalid task sequence/topic", ids={"task": "000-implement-a1"}),
    Case("task uppercase topic", "dispatch", "invalid task sequence/topic", ids={"task": "001-Topic"}),
    Case("task dot-dot", "dispatch", "invalid task sequence/topic", ids={"task": ".."}),
    Case("task path escape", "dispatch", "invalid task sequence/topic", ids={"task": "001-a/../x"}),
    Case("change id malformed", "dispatch", "invalid change id", ids={"change": "demo"}),
    # -- change -------------------------------------------------------------------------------
    Case("change not found", "dispatch", "not found", ids={"change": "2026-11-29-other"}),
    Case("archived change", "return", "archived handoffs are frozen", report=True, tree=archive("")),
    Case("archived by month", "dispatch", "archived handoffs are frozen", tree=archive("2026-11")),
    Case(
        "completed change at dispatch",
        "dispatch",
        "dispatch requires an active change",
        tree=outcome("completed"),
    ),
    Case(
        "cancelled change at dispatch",
        "dispatch",
        "dispatch requires an active change",
        tree=outcome("cancelled"),
    ),
    # -- directories ----------------------------------------------------------------------------
    Case("round missing", "dispatch", "not found", tree=remove_round),
    Case(
        "task missing",
        "dispatch",
        "task sequence is missing or occupied more than once",
        ids={"task": "009-nothing"},
    ),
    Case(
        "number twice",
        "dispatch",
        "task sequence is missing or occupied more than once",
        tree=second_entry("001-other"),
    ),
    Case(
        "number twice at return",
        "return",
        "task sequence is missing or occupied more than once",
        report=True,
        tree=second_entry("001-b"),
    ),
    Case("symlinked task dir", "dispatch", "symlink", tree=symlinked("task")),
    Case("symlinked round dir", "dispatch", "symlink", tree=symlinked("round")),
    # -- TASK.md --------------------------------------------------------------------------------
    Case("TASK missing", "dispatch", "TASK.md not found", tree=remove("TASK.md")),
    Case("TASK is a directory", "dispatch", "TASK.md is not a regular file", tree=task_is_directory),
    Case("TASK not utf-8", "dispatch", "TASK.md is not valid UTF-8", task=sub("## Goal\n", "## Goal\n\udcff\n")),
    Case("no frontmatter", "dispatch", "frontmatter", task=regex(r"(?s)\A---\n.*?\n---\n", "")),
    Case(
        "schema 2",
        "dispatch",
        "TASK requires schema_version 1",
        task=sub("schema_version: 1", "schema_version: 2"),
    ),
    Case(
        "schema as string",
        "dispatch",
        "TASK requires schema_version 1",
        task=sub("schema_version: 1", 'schema_version: "1"'),
    ),
    Case("schema missing", "dispatch", "TASK requires schema_version 1", task=sub("schema_version: 1\n", "")),
    Case(
        "schema true",
        "dispatch",
        "TASK requires schema_version 1",
        task=sub("schema_version: 1", "schema_version: true"),
    ),
    Case("unknown key", "dispatch", "TASK: unknown metadata field", task=sub("kind:", 'owner: "lead"\nkind:')),
    Case("duplicate key", "dispatch", "duplicate key", task=sub("kind:", 'kind: "review"\nkind:')),
    Case(
        "session mismatch",
        "dispatch",
        "TASK identity mismatch",
        task=regex(r'^session: ".*"$', 'session: "20261130T000000Z"'),
    ),
    Case(
        "task mismatch",
        "dispatch",
        "TASK identity mismatch",
        task=regex(r'^task: ".*"$', 'task: "001-other"'),
    ),
    Case("invalid kind", "dispatch", "TASK: invalid kind", task=regex(r'^kind: ".*"$', 'kind: "deploy"')),
    Case(
        "change mismatch",
        "dispatch",
        "TASK change mismatch",
        task=regex(r'^change: ".*"$', 'change: "2026-11-29-other"'),
    ),
    *(
        Case(
            f"ticket {t!r}",
            "dispatch",
            "TASK: invalid ticket",
            task=sub("kind:", f"ticket: {json.dumps(t)}\nkind:"),
        )
        for t in ("tbd", "Unknown", "<T-1>", "{ticket}", " T-1", "...", "")
    ),
    Case("ticket not a string", "dispatch", "TASK: invalid ticket", task=sub("kind:", "ticket: 12\nkind:")),
    Case("Goal missing", "dispatch", "expected one Goal section", task=sub("## Goal\n", "")),
    Case(
        "Inputs twice",
        "dispatch",
        "expected one Inputs section",
        task=sub("## Acceptance\n", "## Inputs\nmore\n\n## Acceptance\n"),
    ),
    Case(
        "Acceptance empty",
        "dispatch",
        "empty Acceptance section",
        task=regex(r"^## Acceptance\n(.*\n)+?(?=\n## Return)", "## Acceptance\n   \n"),
    ),
    Case(
        "Inputs only subheading",
        "dispatch",
        "empty Inputs section",
        task=regex(r"^## Inputs\n(.*\n)+?(?=\n## Workspace)", "## Inputs\n### nothing\n"),
    ),
    Case(
        "Return trailing space",
        "dispatch",
        "expected one Return section",
        task=sub("## Return\n", "## Return \n"),
    ),
    Case(
        "Goal only in fence",
        "dispatch",
        "expected one Goal section",
        task=sub("## Goal\n", "```\n## Goal\n```\n"),
    ),
    Case(
        "Goal ends at h1",
        "dispatch",
        "empty Goal section",
        task=regex(r"^## Goal\n(.*\n)+?(?=\n## Inputs)", "## Goal\n# Heading one\n"),
    ),
    # -- REPORT.md ------------------------------------------------------------------------------
    Case(
        "report at dispatch",
        "dispatch",
        "already delivered; create a new task instead of redispatch",
        report=True,
    ),
    Case("report missing at return", "return", "REPORT.md not found"),
    Case(
        "report session mismatch",
        "return",
        "REPORT identity mismatch",
        report=True,
        report_edit=regex(r"^Session: .*$", "Session: 20261130T000000Z"),
    ),
    Case(
        "report task missing",
        "return",
        "REPORT identity mismatch",
        report=True,
        report_edit=regex(r"^Task: .*\n", ""),
    ),
    Case(
        "report status done",
        "return",
        "REPORT: invalid terminal status",
        report=True,
        report_edit=regex(r"^Status: .*$", "Status: done"),
    ),
    Case(
        "report status twice",
        "return",
        "REPORT: duplicate Status",
        report=True,
        report_edit=sub("Status: completed", "Status: completed\nStatus: failed"),
    ),
    Case(
        "report status after heading",
        "return",
        "REPORT: invalid terminal status",
        report=True,
        report_edit=lambda t: re.sub(r"^Status: .*\n", "", t, flags=re.M).replace(
            "## 聚焦交接\n", "## 聚焦交接\nStatus: completed\n"
        ),
    ),
    Case(
        "report focus missing",
        "return",
        "expected one 聚焦交接 section",
        report=True,
        report_edit=sub("## 聚焦交接", "## 聚焦"),
    ),
    Case(
        "report problems empty",
        "return",
        "empty 问题与下一步 section",
        report=True,
        report_edit=regex(r"^## 问题与下一步\n(.*\n?)+", "## 问题与下一步\n\n"),
    ),
    Case(
        "report not utf-8",
        "return",
        "REPORT.md is not valid UTF-8",
        report=True,
        report_edit=sub("## 聚焦交接\n", "## 聚焦交接\n\udcfe\n"),
    ),
    Case(
        "report is a directory",
        "return",
        "REPORT.md is not a regular file",
        tree=lambda t: (t.task_dir / "REPORT.md").mkdir(),
    ),
    # -- session-locator.json ----------------------------------------------------------------------
    Case("locator relative", "return", NOT_ABSOLUTE, report=True, tree=locator({"path": "logs/s.jsonl"})),
    Case(
        "locator unknown segment",
        "return",
        PLACEHOLDER,
        report=True,
        tree=locator({"path": "/home/unknown/s.jsonl"}),
    ),
    Case("locator ellipsis segment", "dispatch", PLACEHOLDER, tree=locator({"path": "/tmp/.../s.jsonl"})),
    Case("locator todo segment windows", "dispatch", PLACEHOLDER, tree=locator({"path": "C:\\TODO\\s.jsonl"})),
    Case("locator angle brackets", "dispatch", PLACEHOLDER, tree=locator({"path": "/home/<user>/s.jsonl"})),
    Case("locator braces", "dispatch", PLACEHOLDER, tree=locator({"path": "/home/{user}/s.jsonl"})),
    Case("locator spaces", "dispatch", PLACEHOLDER, tree=locator({"path": " /home/me/s.jsonl"})),
    Case("locator word tbd", "dispatch", PLACEHOLDER, tree=locator({"path": "tbd"})),
    Case(
        "locator extra field",
        "dispatch",
        "session-locator: unknown tool",
        tree=locator({"path": "/x/s.jsonl", "tool": "codex"}),
    ),
    Case("locator missing path", "dispatch", "session-locator: missing path", tree=locator({})),
    Case("locator empty path", "dispatch", "session-locator.path", tree=locator({"path": ""})),
    Case("locator path number", "dispatch", "session-locator.path", tree=locator({"path": 7})),
    Case("locator array", "dispatch", "session-locator", tree=locator(["/x"])),
    Case("locator bad json", "dispatch", "not valid UTF-8 JSON", tree=put("session-locator.json", "{path: /x}")),
    Case("locator drive without slash", "dispatch", NOT_ABSOLUTE, tree=locator({"path": "C:log.jsonl"})),
    # -- classes where Python and the seed's JavaScript read text differently ---------------------
    Case(
        "fullwidth digits in round",
        "dispatch",
        "invalid orchestration session",
        ids={"session": "２０２６1130T044500Z"},
    ),
    Case("arabic digits in task", "dispatch", "invalid task sequence/topic", ids={"task": "٠٠١-implement-a1"}),
    Case(
        "round with trailing newline",
        "dispatch",
        "invalid orchestration session",
        ids={"session": "20261130T044500Z\n"},
    ),
    Case(
        "round suffix beyond 2^53, canonical",
        "dispatch",
        "not found in the change",  # a valid id: only the directory is missing
        ids={"session": "20261130T044500Z-100000000000000000000"},
    ),
    Case(
        "round suffix beyond 2^53, rounded",
        "dispatch",
        "invalid orchestration session",
        ids={"session": "20261130T044500Z-99999999999999999999"},
    ),
    Case(
        "status with a trailing BOM",
        "return",
        None,
        report=True,
        report_edit=sub("Status: completed", "Status: completed\ufeff"),
    ),
    Case(
        "status after a unit separator",
        "return",
        "REPORT: invalid terminal status",
        report=True,
        report_edit=sub("Status: completed", "Status:\x1fcompleted"),
    ),
    Case(
        "status with a trailing NEL",
        "return",
        "REPORT: invalid terminal status",
        report=True,
        report_edit=sub("Status: completed", "Status: completed\x85"),
    ),
    Case(
        "section of a BOM only",
        "dispatch",
        "empty Acceptance section",
        task=regex(r"(## Acceptance\n)[^\n]*\n", "\\1\ufeff\n"),
    ),
    Case("section of a NEL only", "dispatch", None, task=regex(r"(## Acceptance\n)[^\n]*\n", "\\1\x85\n")),
    Case("ticket with a kelvin sign", "dispatch", None, task=sub("kind:", 'ticket: "UN\u212aNOWN"\nkind:')),
    Case("ticket unknown", "dispatch", "TASK: invalid ticket", task=sub("kind:", 'ticket: "UNKNOWN"\nkind:')),
    Case("ticket with a long s", "dispatch", None, task=sub("kind:", 'ticket: "TBD\u017f"\nkind:')),
    Case("ticket yes", "dispatch", None, task=sub("kind:", "ticket: yes\nkind:")),
    Case("ticket on", "dispatch", None, task=sub("kind:", "ticket: on\nkind:")),
    Case("ticket sexagesimal", "dispatch", None, task=sub("kind:", "ticket: 1:20\nkind:")),
    Case("ticket underscores", "dispatch", None, task=sub("kind:", "ticket: 1_000\nkind:")),
    Case("ticket date", "dispatch", None, task=sub("kind:", "ticket: 2026-11-30\nkind:")),
    Case("second BOM in TASK", "dispatch", "TASK must open", task=lambda t: "\ufeff\ufeff" + t),
    Case("one BOM in TASK", "dispatch", None, task=lambda t: "\ufeff" + t),
    Case(
        "BOM before Outcome",
        "dispatch",
        None,
        tree=lambda t: (t.change_dir / "README.md").write_text("\ufeffOutcome: active\n"),
    ),
    Case(
        "duplicate heading past 4 MiB",
        "dispatch",
        "larger than",
        task=lambda t: t + "\n" + "x" * (4 * 1024 * 1024) + "\n## Goal\nagain\n",
    ),
    Case(
        "locator of 5 MiB",
        "dispatch",
        "larger than",
        tree=put("session-locator.json", json.dumps({"path": "/x/" + "a" * (5 * 1024 * 1024)})),
    ),
    Case(
        "locator nested deeply",
        "dispatch",
        "nested too deeply",
        tree=put("session-locator.json", "[" * 100_000 + "]" * 100_000),
    ),
    Case(
        "frontmatter key is a list",
        "dispatch",
        "a key must be a plain value",
        task=sub("kind:", "? [a, b]\n: 1\nkind:"),
    ),
    Case(
        "frontmatter key is a mapping",
        "dispatch",
        "a key must be a plain value",
        task=sub("kind:", "? {a: b}\n: 1\nkind:"),
    ),
]


def build(tmp_path: Path, case: Case) -> tuple[Store, Ref]:
    project = tmp_path / "project"
    state_root = project / "speculo" / ".speculo"
    make_change(state_root)
    store = Store(state_root, project)
    ref = store.create_task(implementation()).ref
    tree = Tree(store, ref)
    task_md = tree.task_dir / "TASK.md"
    if case.task is not None:
        task_edit = case.task
        task_md.chmod(0o644)
        task_md.write_bytes(task_edit(task_md.read_text()).encode("utf-8", "surrogateescape"))
    if case.report:
        focused = "Did the work. Kept the API. Stopped after tests. Next: review."
        store.write_report(
            report_of(ref, status=case.status, focused=focused, artifacts="src/a1/x.py", verification="pytest: exit 0"),
            ref.change,
        )
    if case.report_edit is not None:
        report_md = tree.task_dir / "REPORT.md"
        report_md.chmod(0o644)
        report_md.write_bytes(case.report_edit(report_md.read_text()).encode("utf-8", "surrogateescape"))
    if case.tree is not None:
        case.tree(tree)
    return store, ref


def test_the_corpus_covers_at_least_sixty_trees() -> None:
    assert len(CASES) >= 60
    assert {c.expect is None for c in CASES} == {True, False}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_the_verdict_agrees_with_the_seed_validator(tmp_path: Path, case: Case) -> None:
    store, ref = build(tmp_path, case)
    change, session, task = (
        case.ids.get("change", ref.change),
        case.ids.get("session", ref.session),
        case.ids.get("task", ref.task),
    )
    verdict = check_handoff(
        lambda: store.queries.snapshot(Ref(change, session, task)), case.stage, change, session, task
    )
    if case.expect is None:
        assert verdict.errors == (), verdict.errors
    else:
        assert any(case.expect in error for error in verdict.errors), verdict.errors
    if SEED:  # a runnable copy of the seed's validate-handoff.mjs, when one is given
        args = arguments(str(store.roots.project_root), change, session, task, case.stage, str(store.roots.state_root))
        seed = subprocess.run([*shlex.split(SEED), *args], capture_output=True, text=True, timeout=60, check=False)
        assert seed.returncode == (1 if verdict.errors else 0), (seed.stdout, verdict.errors)


def test_a_report_pinned_to_another_task_text_is_an_error(store: Store) -> None:
    ref = store.create_task(implementation()).ref
    store.write_report(
        report_of(ref, status="completed", focused="A. B. C.", artifacts="x", verification="y"),
        ref.change,
    )
    rewrite(store.roots.task_dir(ref) / "TASK.md", sub("implements A1", "implements A2"))
    errors = store.queries.validate(ref, "return").errors
    assert any("Task-SHA256 differs" in e for e in errors)


def test_a_hard_linked_task_is_an_error(store: Store) -> None:
    ref = store.create_task(implementation()).ref
    os.link(store.roots.task_dir(ref) / "TASK.md", store.roots.state_root / "copy.md")
    assert any("hard links" in e for e in store.queries.validate(ref, "dispatch").errors)


def test_a_leftover_temp_file_is_a_warning_and_never_a_report(store: Store) -> None:
    ref = store.create_task(implementation()).ref
    (store.roots.task_dir(ref) / new_temp_name("REPORT.md")).write_text("Session: x\n")
    dispatch = store.queries.validate(ref, "dispatch")
    assert dispatch.ok
    assert any("leftover temp file" in w for w in dispatch.warnings)
    assert "REPORT.md not found" in store.queries.validate(ref, "return").errors


@pytest.mark.parametrize(
    ("focused", "warned"), [("One sentence only.", True), ("A. B. C.", False), ("A. B. C. D. E. F.", True)]
)
def test_a_focused_handoff_outside_three_to_five_sentences_is_a_warning(
    store: Store, focused: str, warned: bool
) -> None:
    ref = store.create_task(implementation()).ref
    report = report_of(ref, status="completed", focused=focused, artifacts="x", verification="y")
    if warned:  # a REPORT is written once: a warning refuses it unless the executor accepts it
        with pytest.raises(InvalidContent) as caught:
            store.write_report(report, ref.change)
        assert "accept_warnings" in caught.value.message
    store.write_report(report, ref.change, accept_warnings=True)
    verdict = store.queries.validate(ref, "return")
    assert verdict.ok
    assert any("sentence" in w for w in verdict.warnings) == warned

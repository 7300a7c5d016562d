"""The hook process loads only what a decision needs: the interpreter's floor for reading an event
(``json``), and the hook's own modules; never the contract's parser, YAML, typing or pathlib."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench.requests import implementation
from handoff_core.contract.scope import Scope
from handoff_core.services.writing.store import Store
from server.client_config import hook_entry
from tests.support.gitrepo import add_worktree, make_repo

pytestmark = pytest.mark.slow  # the hook runs as its own process
FLOOR = "import json, sys\njson.loads(sys.stdin.buffer.read())\n"
HOOK_MODULES = {
    *("os", "posixpath", "genericpath", "stat", "_stat"),  # paths are judged: os, which -S no longer loads
    "__future__",
    "_sha256",
    "collections.abc",
    "select",
    "shlex",
    "signal",
    "handoff_core",
    "handoff_core.contract",
    "handoff_core.contract.digest",
    "handoff_core.contract.globs",
    "handoff_core.contract.pattern",  # where the contract's patterns compile, on first use
    "handoff_core.errors",
    "handoff_core.files",
    "handoff_core.files.executor_home",  # where this user's cache is (the stop hook's records, outside a sandbox)
    "handoff_core.files.local_socket",  # a sandboxed stop hook asks the broker
    "handoff_core.files.git_config",
    "handoff_core.files.git_records",  # the post-tool hook reads HEAD from git's files (a task without commit)
    "handoff_core.files.submodules",  # the post-tool hook walks populated submodules (tree_status)
    "handoff_core.services",
    "handoff_core.services.rules",
    "handoff_core.services.rules.scope_rule",
    *(
        f"handoff_core.services.evidence{name}"
        for name in (
            "",
            ".codex_patch",
            ".crossings",
            ".endings",
            ".git_actions",
            ".hook",
            ".hook_call",
            ".hook_event",
            ".lean_lines",
        )
    ),
    "handoff_core.services.evidence.post_tool",
    *(f"handoff_core.services.evidence{name}" for name in (".shell_rule", ".stop_check", ".task_pin", ".tree_status")),
}


def imported(command: list[str], data: bytes) -> set[str]:
    done = subprocess.run(
        [command[0], "-X", "importtime", *command[1:]], input=data, capture_output=True, timeout=60, check=False
    )
    lines = done.stderr.decode().splitlines()
    return {line.split("|")[-1].strip() for line in lines if line.startswith("import time:")} - {"imported package"}


def dispatched(store: Store, project: Path) -> tuple[Path, list[str]]:
    """A task's worktree and the flags its hook runs with."""
    make_repo(project)
    tree = add_worktree(project, "task-a")
    scope = Scope(workspace="required", writable=("src/a1/**",), worktree=str(tree), branch="task-a")
    stored = store.create_task(implementation(scope=scope))
    roots = ["--project-root", str(project), "--state-root", str(store.roots.state_root)]
    flags = ["--ref", str(stored.ref), "--task-sha256", stored.sha256, *roots]
    return tree, flags


def test_each_event_loads_no_more_than_the_floor_and_the_hook_s_own_modules(
    store: Store, project: Path, tmp_path: Path
) -> None:
    tree, flags = dispatched(store, project)
    floor_script = tmp_path / "floor.py"
    floor_script.write_text(FLOOR)
    floor = imported([sys.executable, "-I", "-S", str(floor_script)], b"{}")
    write: dict[str, object] = {"hook_event_name": "PreToolUse", "tool_name": "Write", "cwd": str(tree)}
    events: dict[str, list[dict[str, object]]] = {
        "pre-tool": [
            write | {"tool_input": {"file_path": str(tree / "src/a1/x.py")}},
            write | {"tool_input": {"file_path": str(tree / "src/b/x.py")}},
            write | {"tool_name": "Bash", "tool_input": {"command": "git push"}},
            write | {"tool_name": "apply_patch", "tool_input": {"command": "*** Begin Patch\n*** End Patch"}},
        ],
        "post-tool": [
            {"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"command": "true"}, "cwd": str(tree)}
        ],
        "stop": [{"hook_event_name": "Stop", "session_id": "s", "cwd": str(tree)}],
    }
    for kind, shapes in events.items():
        for event in shapes:
            loaded = imported([*hook_entry(), *flags, "--event", kind], json.dumps(event).encode())
            assert "handoff_core.services.evidence.hook" in loaded  # it ran
            assert kind != "post-tool" or "handoff_core.services.evidence.tree_status" in loaded  # git ran
            assert loaded - floor <= HOOK_MODULES, (kind, sorted(loaded - floor - HOOK_MODULES))


def test_an_answer_that_cannot_be_written_ends_the_process_with_the_deny_exit(
    store: Store, project: Path, tmp_path: Path
) -> None:
    tree, flags = dispatched(store, project)
    event = {"hook_event_name": "PreToolUse", "tool_name": "Write", "cwd": str(tree)}
    data = json.dumps(event | {"tool_input": {"file_path": str(tree / "src/b/x.py")}}).encode()
    with Path("/dev/full").open("wb") as full:  # every write fails: no space left
        done = subprocess.run(
            [*hook_entry(), *flags], input=data, stdout=full, stderr=subprocess.PIPE, timeout=60, check=False
        )
    assert done.returncode == 2, done.stderr
    with (tmp_path / "answer").open("wb") as answer:  # the same deny, written, is whole
        done = subprocess.run([*hook_entry(), *flags], input=data, stdout=answer, timeout=60, check=False)
    assert done.returncode == 0
    assert json.loads((tmp_path / "answer").read_bytes())["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_the_variable_names_the_hook_reads_without_layout_are_layouts() -> None:
    """The hook process reads a sandbox's variables by name without loading ``layout``: the same names."""
    from handoff_core import layout
    from handoff_core.services.evidence import endings, hook

    assert f'os.environ.get("{layout.BROKER_VARIABLE}")' in Path(endings.__file__).read_text()
    assert f'os.environ.get("{layout.WRITABLE_VARIABLE}")' in Path(hook.__file__).read_text()

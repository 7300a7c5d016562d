"""Wire shapes of the tool results (their output schemas). Kept flat and small on purpose."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from handoff_core.layout import Conclusion, SaveOutcome, SkillState

__all__ = [
    "Claimed",
    "Coordination",
    "CoordinationSaved",
    "CreatedTask",
    "Document",
    "ExecutorConfig",
    "Handoff",
    "History",
    "LogCandidates",
    "Packaged",
    "ReportWritten",
    "ReturnReceived",
    "Status",
    "TaskState",
    "TaskView",
    "Validation",
    "Verified",
    "Waited",
    "Wire",
    "Written",
]


class Wire(BaseModel):
    """A tool result; ``registration.tool`` strips its schema's titles with the parameters'."""


# An executor's configuration per client: the names say which; no descriptions, which every Lead's
# context would pay for (a docstring here would become one).
class ExecutorConfig(Wire):
    claude_code_mcp_json: str  # for `claude --mcp-config` or .mcp.json
    claude_code_settings: str  # the task's hooks, for --settings or .claude/settings.local.json
    # A worker's `claude` launch line: the server, the hooks, and the pinned session id (derived from the
    # report token: record_session_locator finds the executor's log by it).
    claude_code_cli: str
    # The whole headless run of each CLI, the dispatch message in it, shell-quoted: paste it as it is.
    claude_code_command: str = ""
    codex_command: str = ""
    codex_args: list[str]  # `codex` -c arguments, then the `exec` flags the task's hooks and sandbox need
    codex_config_toml: str  # a ~/.codex/config.toml entry
    warning: str = ""


class CreatedTask(Wire):
    ref: str
    created: bool = Field(description="false: an identical earlier task")
    task_path: str
    task_path_in_project: str
    report_path_in_project: str
    task_sha256: str
    report_token: str
    dispatch_message: str
    executor_config: ExecutorConfig
    warnings: list[str] = []


class TaskView(Wire):
    kind: str
    task_sha256: str
    task_path: str
    text: str = Field(description="the whole TASK.md")


class Written(Wire):
    path: str
    sha256: str
    created: bool


class ReportWritten(Written):
    reply_line: str  # the one line the executor sends the Lead
    warnings: list[str]


class Validation(Wire):
    ok: bool
    errors: list[str] = []
    warnings: list[str] = []
    caveat: str = ""
    proof: str = ""


class TaskState(Wire):
    ref: str
    kind: str = ""
    state: str
    age_seconds: float
    claim: str = ""
    has_locator: bool = False
    problems: list[str] = []
    proof: str = ""
    audit: str = ""
    verification: str = ""  # the last verify_task verdict on its REPORT
    attention: str = ""  # why the Lead has to look at it now (a failed audit, an invalid proof, ...)


class Status(Wire):
    counts: dict[str, int]
    unjudged: int = 0  # counted from file headers, not yet validated (may turn invalid); 0 once judged
    tasks: list[TaskState]
    next_cursor: str = ""
    free_writer_slots: int
    writers: str = ""
    state_root: str
    external: list[str] = []  # external-web dispatches (the Lead's view)
    events: str = ""  # "polled: …" when the team server's watcher polls the tree


class Audited(Wire):
    verdict: Conclusion
    reason: str
    base: str = ""
    checkpoint: str = ""
    worktree: str = ""
    changed: list[str] = []
    changed_count: int = 0
    violations: list[dict[str, str]] = []
    dirty: list[str] = []
    not_judged: list[str] = []  # "path: why" for each changed path the audit leaves to another judgement


class Replay(Wire):
    run: str
    exit_code: int | None  # None: stopped (timed out, too much output) or never started
    seconds: float
    tail: str  # the end of its output: untrusted text
    why: str  # how it failed; "" when it passed
    claimed: bool  # the REPORT claims it passed


class Verified(Wire):
    verdict: Conclusion
    reason: str
    replayed: str = ""  # the checkpoint, or the project tree as returned
    checks: list[Replay] = []
    flags: list[str] = []  # false passes claimed, what judges the checks changed


class Waited(Wire):
    arrived: list[str] = Field(description="'ref FILE'")
    pending: list[str]
    timed_out: bool
    waited_seconds: float
    state_root: str


class Handoff(Wire):
    untrusted: bool = True
    header: dict[str, str]
    focused: str
    rest: str = ""
    locator_path: str = ""
    task_changed: bool = False  # the REPORT pins another TASK
    provenance: list[str] = []
    flags: list[str] = []  # hidden characters found
    truncated: bool = False
    proof: str = ""
    audit: str = ""
    verification: str = ""  # the last verify_task: "verdict: why"


class History(Wire):
    log_path: str
    hits: list[str] = Field(default=[], description="line|record|time|role: snippet")
    stopped_early: bool = False


class LogCandidates(Wire):
    candidates: list[str]  # "path: ok" or "path: <problem>"
    ambiguous: bool


class Coordination(Wire):
    choice: dict[str, Any] = Field(description="empty when blocked")
    source: str
    reasons: list[str] = []


class CoordinationSaved(Wire):
    outcome: SaveOutcome
    defaults: dict[str, Any]
    skill: SkillState
    next_step: str = ""


class Claimed(Wire):
    ref: str
    task_path: str


class Packaged(Wire):
    locator: str
    size: int
    sha256: str
    included: int
    excluded: list[str] = Field(default=[], description="path: reason")


class ReturnReceived(Wire):
    raw: str
    raw_sha256: str
    standard: str  # the standard return ZIP: every file of the return is read there
    extracted: int
    kept: list[str] = []  # the files left only in the standard ZIP (read there; see accept)
    held: list[str] = []  # "path: why" for each kept file the project's tools would run (taken only by name)


class Document(Wire):
    path: str
    sha256: str

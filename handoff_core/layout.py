"""The contract's names, in one place: file names, where they live, headings, defaults, vocabularies.

Everything above this module spells a file name, a folder, a section heading, a default or a
closed vocabulary by importing it from here; a closed vocabulary is a ``Literal`` so the type
checker sees every comparison against it.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: handoff-validate never loads it
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Final, Literal

__all__ = [
    "ACTIVE_LINE",
    "ARCHIVE",
    "ATTEMPTS_BEFORE_WARNING",
    "AUTHORISED_ACTIONS",
    "BLOCKER_SHOWN",
    "BROKER_VARIABLE",
    "CHANGES",
    "CHANGE_README",
    "CHECK_MAX_OUTPUT",
    "CHECK_TAIL_BYTES",
    "CLOSING_FILES",
    "COORDINATION_FILE",
    "DEFAULT_CHECK_TIMEOUT",
    "DEFAULT_STATE_ROOT",
    "DEFAULT_WRITER_CAP",
    "EXCLUSIONS_SHOWN",
    "EXTERNAL_SHOWN",
    "FOCUSED_LENGTH",
    "FOCUSED_SENTENCES",
    "HANDOFF_DOCS",
    "HANDOFF_FILES",
    "HEADING_MEANINGS",
    "INDEX_ACTIONS",
    "KINDS",
    "LOCATIONS",
    "LOCATOR_FILE",
    "LOG_TOOLS",
    "MAX_CHECKS",
    "MAX_CHECK_LINE",
    "MAX_CHECK_TIMEOUT",
    "MAX_FILE_BYTES",
    "MAX_STOP_CONDITIONS",
    "OUTCOMES",
    "READABLE_FILES",
    "RECENT_ARRIVAL_SECONDS",
    "REF_VARIABLE",
    "RELEASE_FILE",
    "RELEASE_KINDS",
    "REPORT_FILE",
    "REPORT_FOCUSED",
    "REPORT_NEXT",
    "REPORT_SECTIONS",
    "REPORT_STATUSES",
    "REPORT_WORK",
    "REVIEWING_KINDS",
    "SANDBOX_MODES",
    "SANDBOX_VARIABLE",
    "SELF_WRITERS",
    "SESSIONS",
    "STAGES",
    "STATUS_PAGE_BYTES",
    "STATUS_VIEWS",
    "TASK_FILE",
    "TASK_SECTIONS",
    "TASK_STATES",
    "TASK_TITLE",
    "TEMP_TOKEN_BYTES",
    "TOKEN_VARIABLE",
    "UNFINISHED_STATUSES",
    "WORKSPACES",
    "WRITABLE_VARIABLE",
    "AuthorisedAction",
    "EntryKind",
    "Kind",
    "Location",
    "LogTool",
    "Outcome",
    "ReleaseKind",
    "ReportStatus",
    "SandboxMode",
    "SelfWriter",
    "Stage",
    "StatusView",
    "TaskState",
    "Workspace",
    "default_secret_file",
    "focused_length_ok",
    "is_temp",
    "literals_on_use",
    "task_parts",
    "temp_name",
    "temp_target",
]

# -- the files of one task ------------------------------------------------------------------------

TASK_FILE: Final = "TASK.md"
REPORT_FILE: Final = "REPORT.md"
LOCATOR_FILE: Final = "session-locator.json"
RELEASE_FILE: Final = "RELEASE.md"
HANDOFF_FILES: Final = (TASK_FILE, REPORT_FILE, LOCATOR_FILE, RELEASE_FILE)
READABLE_FILES: Final = (TASK_FILE, REPORT_FILE, LOCATOR_FILE)  # what the resource template serves
CLOSING_FILES: Final = (REPORT_FILE, RELEASE_FILE)  # either one ends a writer claim

# A publish temp file, ``.NAME.<token>.tmp`` beside NAME: never a handoff file, never a completion
# signal. Publishing makes it (``temp_name``) and every walk recognises it (``is_temp``,
# ``temp_target``) from this one definition; DOTALL because a name may hold any character but ``/``.
TEMP_TOKEN_BYTES: Final = 8  # random bytes of the token, written as twice as many hex digits


def temp_name(name: str, token: str) -> str:
    """The temp name that publishes ``name``; ``token`` is ``TEMP_TOKEN_BYTES`` random bytes in hex."""
    return f".{name}.{token}.tmp"


def temp_target(name: str) -> str | None:
    """The name the temp file ``name`` was publishing (``.TARGET.TOKEN.tmp``, the token
    ``TEMP_TOKEN_BYTES`` in lowercase hex); None when ``name`` is no temp name. Read without ``re``:
    a sandboxed launch and the hook load this module on every start."""
    size = 2 * TEMP_TOKEN_BYTES
    end = len(name) - len(".tmp")
    if not (name.startswith(".") and name.endswith(".tmp")) or end - size - 1 < 2:  # noqa: PLR2004 - a dot, one char
        return None
    token = name[end - size : end]
    if name[end - size - 1] != "." or token.strip("0123456789abcdef"):
        return None
    return name[1 : end - size - 1]


def is_temp(name: str) -> bool:
    return temp_target(name) is not None


# -- where they live, below the state root -----------------------------------------------------------

DEFAULT_STATE_ROOT: Final = "speculo/.speculo"  # text: handoff-validate never loads pathlib
CHANGES: Final = ("specdev", "changes")
ARCHIVE: Final = ("specdev", "archive")
CHANGE_README: Final = "README.md"  # a change's README, holding its ``Outcome:`` line
SESSIONS: Final = "sessions"  # the seed's folder of rounds inside a change
HANDOFF_DOCS: Final = ("commands", "handoff")
COORDINATION_FILE: Final = ("coordination", "project.json")
ACTIVE_LINE: Final = "Outcome: active"  # the one line of CHANGE_README that makes a change active


def task_parts(change: str, session: str, task: str) -> tuple[str, ...]:
    """Components of an active task's directory below the state root."""
    return (*CHANGES, change, SESSIONS, session, task)


# -- what the files say -----------------------------------------------------------------------------

TASK_SECTIONS: Final = ("Goal", "Inputs", "Workspace and Scope", "Acceptance", "Return")
REPORT_FOCUSED: Final = "聚焦交接"
REPORT_WORK: Final = "产物与验证"
REPORT_NEXT: Final = "问题与下一步"
REPORT_SECTIONS: Final = (REPORT_FOCUSED, REPORT_WORK, REPORT_NEXT)
TASK_TITLE: Final = "任务简报"
# The seed contract's headings, matched literally by its validator, and what they mean.
HEADING_MEANINGS: Final = {
    TASK_TITLE: "task brief",
    REPORT_FOCUSED: "focused handoff",
    REPORT_WORK: "artifacts and verification",
    REPORT_NEXT: "problems and next steps",
}
FOCUSED_SENTENCES: Final = (3, 5)  # the focused handoff's length, in sentences
FOCUSED_LENGTH: Final = f"{FOCUSED_SENTENCES[0]}-{FOCUSED_SENTENCES[1]} sentences"  # as tools and messages say it


def focused_length_ok(sentences: int) -> bool:
    return FOCUSED_SENTENCES[0] <= sentences <= FOCUSED_SENTENCES[1]


# -- closed vocabularies ----------------------------------------------------------------------------

# Each vocabulary's home is its tuple; its ``Literal`` is made from it on first use (``Kind`` from
# ``KINDS``...), so that a process that only checks files never imports ``typing``. The type
# checker reads the ``Literal`` spelled out below, and a test holds each one equal to its tuple.
KINDS: Final[tuple[Kind, ...]] = ("implementation", "review", "research", "test-observation")
WORKSPACES: Final[tuple[Workspace, ...]] = ("current", "required")
SELF_WRITERS: Final[tuple[SelfWriter, ...]] = ("lead", "team")  # who writes under claim_writer: the Lead, or its team
REVIEWING_KINDS: Final[tuple[Kind, ...]] = ("review", "test-observation")  # the kinds review_of pins to a checkpoint
REPORT_STATUSES: Final[tuple[ReportStatus, ...]] = ("completed", "blocked", "failed", "cancelled")
# stopped: the writer was seen to stop; none: no writer ran
RELEASE_KINDS: Final[tuple[ReleaseKind, ...]] = ("stopped", "none")
STAGES: Final[tuple[Stage, ...]] = ("dispatch", "return")
OUTCOMES: Final[tuple[Outcome, ...]] = ("active", "completed", "cancelled")
# What a status reply lists: the tasks that need the Lead (the default), all, or those in one state.
STATUS_VIEWS: Final[tuple[StatusView, ...]] = (
    *("needs_lead", "all", "outstanding", "incomplete", "dispatched", "returned", "released", "invalid"),
)
TASK_STATES: Final[tuple[TaskState, ...]] = ("incomplete", "dispatched", "returned", "released", "invalid")
LOCATIONS: Final[tuple[Location, ...]] = ("active", "archived")
LOG_TOOLS: Final[tuple[LogTool, ...]] = ("claude-code", "codex")  # the agent CLIs whose session logs are found by id
ENTRY_KINDS: Final[tuple[EntryKind, ...]] = ("file", "dir", "symlink", "other", "missing")
# What an executor may do beyond writing inside its scope and running checks, granted one by one in
# the TASK (the seed template's "authorised actions"); the guard judges shell commands by these names.
AUTHORISED_ACTIONS: Final[tuple[AuthorisedAction, ...]] = (
    *("commit", "merge", "push", "rebase", "reset-hard", "switch-branch", "stash", "stage-outside-scope"),
)
# The authorised actions that write git's index, HEAD or a branch: in the sandbox, only in a worktree of
# the task's own (the main tree's index lies beside git's configuration and hooks).
INDEX_ACTIONS: Final[tuple[AuthorisedAction, ...]] = (
    *("commit", "merge", "rebase", "reset-hard", "switch-branch", "stash", "stage-outside-scope"),
)
# How an executor's launch is contained (services/containment): in the kernel's sandbox, refused where the
# kernel offers none (required, the default); unsandboxed where it offers none (if-available); never (off).
SANDBOX_MODES: Final[tuple[SandboxMode, ...]] = ("required", "if-available", "off")
# What an audit or a verification concludes: unknown when it could not decide (never read as passed).
CONCLUSIONS: Final[tuple[Conclusion, ...]] = ("passed", "failed", "unknown")
# The project's coordination choice (services/project/coordination_setup): how executors are reached,
# where a Skill-guided mode's Skill lies, and what saving it did (saved: written; reused: the file
# already said this) and found of the Skill.
COORDINATION_MODES: Final[tuple[Mode, ...]] = ("herdr", "orca", "cli", "lead")
SKILLS_DIRS: Final[tuple[SkillsDir, ...]] = (".agents/skills", ".claude/skills")
SAVE_OUTCOMES: Final[tuple[SaveOutcome, ...]] = ("saved", "reused")
SKILL_STATES: Final[tuple[SkillState, ...]] = ("present", "missing", "not needed")


def literals_on_use(
    module: str, vocabularies: dict[str, tuple[str, ...]], names: dict[str, object]
) -> Callable[[str], object]:
    """A module ``__getattr__`` that makes each vocabulary's ``Literal`` from its tuple (its home) the
    first time it is asked for, and keeps it in the module's ``names``: a check never imports ``typing``."""

    def made(name: str) -> object:
        if name not in vocabularies:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        from typing import Literal

        literal = names[name] = Literal[vocabularies[name]]
        return literal

    return made


VOCABULARIES: Final = {
    "Kind": KINDS,
    "Workspace": WORKSPACES,
    "ReportStatus": REPORT_STATUSES,
    "ReleaseKind": RELEASE_KINDS,
    "SelfWriter": SELF_WRITERS,
    "LogTool": LOG_TOOLS,
    "Stage": STAGES,
    "Outcome": OUTCOMES,
    "Location": LOCATIONS,
    "EntryKind": ENTRY_KINDS,
    "TaskState": TASK_STATES,
    "AuthorisedAction": AUTHORISED_ACTIONS,
    "StatusView": STATUS_VIEWS,
    "SandboxMode": SANDBOX_MODES,
    "Conclusion": CONCLUSIONS,
    "Mode": COORDINATION_MODES,
    "SkillsDir": SKILLS_DIRS,
    "SaveOutcome": SAVE_OUTCOMES,
    "SkillState": SKILL_STATES,
}
if TYPE_CHECKING:
    Kind = Literal["implementation", "review", "research", "test-observation"]
    Workspace = Literal["current", "required"]
    ReportStatus = Literal["completed", "blocked", "failed", "cancelled"]
    ReleaseKind = Literal["stopped", "none"]
    SelfWriter = Literal["lead", "team"]
    LogTool = Literal["claude-code", "codex"]
    Stage = Literal["dispatch", "return"]
    Outcome = Literal["active", "completed", "cancelled"]
    Location = Literal["active", "archived"]
    EntryKind = Literal["file", "dir", "symlink", "other", "missing"]
    TaskState = Literal["incomplete", "dispatched", "returned", "released", "invalid"]
    AuthorisedAction = Literal[
        "commit", "merge", "push", "rebase", "reset-hard", "switch-branch", "stash", "stage-outside-scope"
    ]
    StatusView = Literal[
        "needs_lead", "all", "outstanding", "incomplete", "dispatched", "returned", "released", "invalid"
    ]
    SandboxMode = Literal["required", "if-available", "off"]
    Conclusion = Literal["passed", "failed", "unknown"]
    Mode = Literal["herdr", "orca", "cli", "lead"]
    SkillsDir = Literal[".agents/skills", ".claude/skills"]
    SaveOutcome = Literal["saved", "reused"]
    SkillState = Literal["present", "missing", "not needed"]
else:
    __getattr__ = literals_on_use(__name__, VOCABULARIES, globals())


MAX_STOP_CONDITIONS: Final = 20  # stop conditions a TASK lists, each one printable line
# A TASK's acceptance checks (contract.checks): each one shell line, run in a folder of the task's
# workspace within its timeout; verify_task replays them at the reported checkpoint.
MAX_CHECKS: Final = 20
MAX_CHECK_LINE: Final = 2000  # characters of one check's shell line
DEFAULT_CHECK_TIMEOUT: Final = 600  # seconds a check may run when the Lead names no timeout
MAX_CHECK_TIMEOUT: Final = 3600
CHECK_TAIL_BYTES: Final = 2000  # of a replayed check's output, the end kept and shown
CHECK_MAX_OUTPUT: Final = 16 * 1024 * 1024  # bytes of output past which a replayed check is stopped
# Reports that end an attempt without its work: after this many on one topic or ticket, the Lead is
# warned before dispatching it again.
UNFINISHED_STATUSES: Final[tuple[ReportStatus, ...]] = ("blocked", "failed")
ATTEMPTS_BEFORE_WARNING: Final = 3

DEFAULT_WRITER_CAP: Final = 3
# A status page's tasks stop short of this many bytes of JSON, so the whole reply stays under 25 KB
# (Claude Code cuts a tool result at 25,000 tokens by default).
STATUS_PAGE_BYTES: Final = 20_000
EXTERNAL_SHOWN: Final = 20  # external-web dispatches a status lists (the most recently sealed)
BLOCKER_SHOWN: Final = 240  # characters of a blocked or failed REPORT's problems a status row shows
EXCLUSIONS_SHOWN: Final = 50  # excluded paths a package reply or SESSION.md lists (the manifest has all)
RECENT_ARRIVAL_SECONDS: Final = 24 * 3600  # a REPORT or RELEASE this recent still needs the Lead's eye

# One size limit for every handoff file: refused on input, and the same bound on every read (a
# larger file on disk is reported as too large, never judged by a prefix).
MAX_FILE_BYTES: Final = 4 * 1024 * 1024


def default_secret_file(environ: Mapping[str, str]) -> str:
    """Where the Lead's secret lives when no flag or variable names it: the user's configuration folder."""
    import os

    base = environ.get("XDG_CONFIG_HOME") or os.path.join(environ.get("HOME") or os.path.expanduser("~"), ".config")
    return os.path.join(base, "handoff-mcp", "secret")


# A sandboxed launch's environment (services/containment): the broker's socket, which publishes the
# executor's writes from outside the sandbox; the ref the launch works for (its hooks know they are
# inside); what it may write, one path a line, a folder with a trailing /.
BROKER_VARIABLE = "HANDOFF_BROKER"
SANDBOX_VARIABLE = "HANDOFF_SANDBOX"
WRITABLE_VARIABLE = "HANDOFF_SANDBOX_WRITE"

# The task an executor's launch line works for (set there beside the executor role), and its report
# token: the main tree's pre-commit hook lets that task commit the paths it holds only when the token
# is the one its TASK's check line records (the ref alone is a name anyone can set). An executor
# elsewhere keeps its bearer token for the team server in the same variable.
REF_VARIABLE = "HANDOFF_REF"
TOKEN_VARIABLE = "HANDOFF_TOKEN"  # noqa: S105 - a variable's name, not a token

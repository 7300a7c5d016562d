"""Every refusal in handoff-mcp is one of these errors.

Each class carries a stable ``code`` that callers (and the MCP tool errors built from it)
can match on; the message says what to do next. The hierarchy::

    HandoffError
    ├── InvalidInput                 code invalid_input       bad argument; fix it and call again
    │   ├── InvalidIdentifier        code invalid_id          change / round / task id off-grammar
    │   ├── InvalidContent           code invalid_content     TASK / REPORT / RELEASE text refused
    │   │   └── QuotedTokenCheck     code quoted_token_check  a TASK's text holds a report token check line
    │   ├── InvalidLocator           code invalid_locator     session-locator path refused
    │   ├── InvalidArguments         code invalid_arguments   a tool call's arguments off their schema
    │   └── WorkspaceRefused         code workspace_refused   worktree/branch not a linked worktree
    ├── NotFound                     code not_found
    │   ├── ChangeNotFound           code change_not_found
    │   └── TaskNotFound             code task_not_found
    ├── StateRefused                 code state_refused       the files say no
    │   ├── ChangeNotActive          code change_not_active   archived, completed or cancelled
    │   ├── AlreadyReported          code already_reported    a REPORT exists already
    │   ├── TaskChanged              code task_changed        TASK differs from the pinned sha256
    │   ├── TooLarge                 code too_large           a file on disk is over MAX_FILE_BYTES
    │   └── CoordinationInvalid      code coordination_invalid coordination/project.json kept: invalid
    ├── Conflict                     code conflict
    │   ├── WriteConflict            code write_conflict      another writer published other bytes
    │   ├── LocatorConflict          code locator_conflict    a different log path is recorded
    │   └── OwnershipConflict        code ownership_conflict  a writer claim blocks the dispatch
    ├── UnsafePath                   code unsafe_path         symlink, hard link, collision, escape
    ├── TokenRefused                 code token_refused       report token missing or wrong
    │   └── ScopeRefused             code scope_refused       a task's session reached past its task
    ├── RoleRefused                  code role_refused        a Lead tool called on an executor's server
    ├── LimitReached                 code limit_reached       a per-session bound of the team server
    │   ├── TooManySubscriptions     code too_many_subscriptions  URIs one session or stream follows
    │   └── TooManyStreams           code too_many_streams    listen streams one bearer holds open
    ├── StorageError                 code storage_error       the OS failed; nothing was half-written
    ├── ConfigError                  code config_error        a flag or HANDOFF_* variable is wrong
    ├── GitError                     code git_error           git failed, timed out or said too much
    ├── TeamServerError              code team_server_error   the team server was not reached or said no
    └── SandboxRefused               code sandbox_refused     the executor cannot be launched contained

OS errors are translated once, where the files layer meets the services
(``files.task_dir.translated``: ``raise StorageError(...) from exc``); YAML errors where the
contract reads frontmatter (``InvalidContent``). Each interface of the adapter turns them into its
own answer in one place: the MCP server in ``server.mcp.registration`` (tools, as ``Error executing
tool NAME: CODE: message``, and resources), the command line in ``server.cli.command_line`` (a line on
stderr, exit 2), the board in ``server.web.board`` (a JSON error with its HTTP status).
"""

from __future__ import annotations

__all__ = [
    "AlreadyReported",
    "ChangeNotActive",
    "ChangeNotFound",
    "ConfigError",
    "Conflict",
    "CoordinationInvalid",
    "GitError",
    "HandoffError",
    "InvalidArguments",
    "InvalidContent",
    "InvalidIdentifier",
    "InvalidInput",
    "InvalidLocator",
    "LimitReached",
    "LocatorConflict",
    "NotFound",
    "OwnershipConflict",
    "QuotedTokenCheck",
    "RoleRefused",
    "SandboxRefused",
    "ScopeRefused",
    "StateRefused",
    "StorageError",
    "TaskChanged",
    "TaskNotFound",
    "TeamServerError",
    "TokenRefused",
    "TooLarge",
    "TooManyStreams",
    "TooManySubscriptions",
    "UnsafePath",
    "WorkspaceRefused",
    "WriteConflict",
]


class HandoffError(Exception):
    """Base of every refusal; ``code`` is stable, the message is for the caller."""

    code = "handoff_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidInput(HandoffError):
    code = "invalid_input"


class InvalidIdentifier(InvalidInput):
    code = "invalid_id"


class InvalidContent(InvalidInput):
    code = "invalid_content"


class QuotedTokenCheck(InvalidContent):
    code = "quoted_token_check"


class InvalidLocator(InvalidInput):
    code = "invalid_locator"


class InvalidArguments(InvalidInput):
    code = "invalid_arguments"


class NotFound(HandoffError):
    code = "not_found"


class ChangeNotFound(NotFound):
    code = "change_not_found"


class TaskNotFound(NotFound):
    code = "task_not_found"


class StateRefused(HandoffError):
    code = "state_refused"


class ChangeNotActive(StateRefused):
    code = "change_not_active"


class AlreadyReported(StateRefused):
    code = "already_reported"


class TaskChanged(StateRefused):
    code = "task_changed"


class TooLarge(StateRefused):
    code = "too_large"


class CoordinationInvalid(StateRefused):
    code = "coordination_invalid"


class Conflict(HandoffError):
    code = "conflict"


class WriteConflict(Conflict):
    code = "write_conflict"


class LocatorConflict(Conflict):
    code = "locator_conflict"


class OwnershipConflict(Conflict):
    code = "ownership_conflict"


class UnsafePath(HandoffError):
    code = "unsafe_path"


class TokenRefused(HandoffError):
    code = "token_refused"


class ScopeRefused(TokenRefused):
    code = "scope_refused"


class RoleRefused(HandoffError):
    code = "role_refused"


class LimitReached(HandoffError):
    code = "limit_reached"


class TooManySubscriptions(LimitReached):
    code = "too_many_subscriptions"


class TooManyStreams(LimitReached):
    code = "too_many_streams"


class StorageError(HandoffError):
    code = "storage_error"


class ConfigError(HandoffError):
    code = "config_error"


class WorkspaceRefused(InvalidInput):
    code = "workspace_refused"


class GitError(HandoffError):
    code = "git_error"


class TeamServerError(HandoffError):
    code = "team_server_error"


class SandboxRefused(HandoffError):
    code = "sandbox_refused"


def error_for(code: str) -> type[HandoffError]:
    """The class of a stable ``code`` (one answered across a process boundary); the base for an unknown one."""
    found: list[type[HandoffError]] = [HandoffError]
    while found:
        kind = found.pop()
        if kind.code == code:
            return kind
        found += kind.__subclasses__()
    return HandoffError

"""The ``handoff-scope`` block of a TASK: who may write what, checked, and read back (used for
ownership). Its rendering, for people and for the claim reader, is ``scope_text``."""

from __future__ import annotations

from functools import lru_cache

from handoff_core.contract.frontmatter import load_yaml
from handoff_core.contract.globs import check_glob_count, check_globs
from handoff_core.contract.pattern import compile_on_use
from handoff_core.contract.record import NamedTuple
from handoff_core.contract.values import is_real
from handoff_core.errors import InvalidContent, OwnershipConflict
from handoff_core.layout import (
    AUTHORISED_ACTIONS,
    INDEX_ACTIONS,
    MAX_STOP_CONDITIONS,
    REVIEWING_KINDS,
    SANDBOX_MODES,
    SELF_WRITERS,
    WORKSPACES,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: handoff-validate never loads it
if TYPE_CHECKING:
    from handoff_core.layout import AuthorisedAction, Kind, SandboxMode, Workspace

__all__ = [
    "LINK_KEYS",
    "RESOURCE_RE",
    "SCOPE_FENCE",
    "Scope",
    "SharedPath",
    "authorised_actions",
    "check_scope",
    "read_scope",
    "sandbox_mode",
    "scope_from",
    "workspace_of",
]

SCOPE_FENCE = "```handoff-scope"
_BAD_GLOB = compile_on_use(r"(^|/)\.\.(/|$)|^/|^[A-Za-z]:|[\\`\x00-\x1f]")


class SharedPath(NamedTuple):
    path: str
    owner: str


class Scope(NamedTuple):
    """Who may write what; parsed back from the ``handoff-scope`` block for ownership."""

    workspace: Workspace | None = None
    writable: tuple[str, ...] = ()
    read_only: tuple[str, ...] = ()
    shared: tuple[SharedPath, ...] = ()
    artifacts: tuple[str, ...] = ()
    notes: str = ""
    resources: tuple[str, ...] = ()  # named, exclusive among writers: port:5432, db:test, git-index
    # Where the work is, pinned at dispatch (services.workspaces): a linked worktree, its branch and the
    # branch tip then; a current task's HEAD then and the paths already dirty (not the executor's).
    worktree: str = ""
    branch: str = ""
    base: str = ""
    dirty: tuple[str, ...] = ()
    remote: str = ""  # a branch with no local worktree lives on this git remote: the executor pushes there
    # What the executor may do beyond writing in scope and running checks, and when it must stop (the
    # seed template's authorised actions and stop conditions).
    actions: tuple[AuthorisedAction, ...] = ()
    stop_conditions: tuple[str, ...] = ()
    # Links to earlier tasks (refs): the task this one retries, the reported task this one reviews
    # at its fixed checkpoint (then ``base``); and who writes a claim_writer task itself (lead, team).
    retry_of: str = ""
    review_of: str = ""
    self_writer: str = ""
    # How the executor's launch is contained (``layout.SANDBOX_MODES``); rendered only when not required.
    sandbox: SandboxMode = "required"


def _check_glob(glob: str, where: str) -> str:
    if not glob or glob.strip() != glob or _BAD_GLOB.search(glob):
        raise InvalidContent(
            f"{where} glob {glob!r} is not a project-relative pattern: no leading '/', drive, '..', "
            "backslash, backtick or control character (e.g. src/a1/**)"
        )
    return glob


def workspace_of(value: str) -> Workspace | None:
    """The workspace a caller named; empty means none (a read-only task)."""
    if not value:
        return None
    for workspace in WORKSPACES:
        if value == workspace:
            return workspace
    raise InvalidContent(f"workspace {value!r} is not one of {', '.join(WORKSPACES)}; omit it for a read-only task")


def check_scope(kind: Kind, scope: Scope) -> Scope:
    """The scope rules that do not need the other tasks (those are ownership's)."""
    for name in ("writable", "read_only", "artifacts"):
        for glob in getattr(scope, name):
            _check_glob(glob, name)
    # What ownership intersects must parse as a glob it decides; every list is bounded.
    check_globs(scope.writable, "writable")
    check_globs(tuple(shared.path for shared in scope.shared), "shared")
    for name in ("read_only", "artifacts"):
        check_glob_count(getattr(scope, name), name)
    for resource in scope.resources:
        if not RESOURCE_RE.match(resource):
            raise InvalidContent(
                f"resource {resource!r} is not a name like port:5432, db:test, git-index or integration:main"
            )
    _check_workspace(kind, scope)
    _check_actions(scope)
    _check_links(kind, scope)
    sandbox_mode(scope.sandbox)
    for shared in scope.shared:
        _check_glob(shared.path, "shared")
        if not is_real(shared.owner):
            raise InvalidContent(f"shared path {shared.path!r} needs a real owner (e.g. lead), not {shared.owner!r}")
    if kind == "implementation":
        if scope.workspace not in WORKSPACES:
            raise InvalidContent("an implementation task needs workspace 'current' or 'required'")
        if not scope.writable:
            raise InvalidContent("an implementation task needs at least one writable glob (e.g. src/a1/**)")
    elif scope.writable or scope.workspace is not None:
        raise OwnershipConflict(
            f"a {kind} task is read-only for project files: drop workspace and writable globs, "
            "and list the test outputs it may write under artifacts"
        )
    return scope


_REMOTE = compile_on_use(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
_COMMIT = compile_on_use(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})\Z")
MAX_DIRTY = 500  # paths recorded as dirty at dispatch; a tree dirtier than that is shared beyond attribution


MAX_STOP_CONDITION = 500  # characters in one stop condition


def authorised_actions(values: list[str] | tuple[str, ...]) -> tuple[AuthorisedAction, ...]:
    """Names of authorised actions, each one of the vocabulary, once."""
    found: list[AuthorisedAction] = []
    for value in values:
        action = next((a for a in AUTHORISED_ACTIONS if a == value), None)
        if action is None:
            raise InvalidContent(
                f"authorised action {value!r} is not one of {', '.join(AUTHORISED_ACTIONS)}; "
                "writing inside the scope and running checks need none"
            )
        if action in found:
            raise InvalidContent(f"authorised action {value!r} is listed twice; list each once")
        found.append(action)
    return tuple(found)


def sandbox_mode(value: str) -> SandboxMode:
    """The sandbox mode a caller named, one of the vocabulary."""
    for mode in SANDBOX_MODES:
        if value == mode:
            return mode
    raise InvalidContent(
        f"sandbox {value!r} is not one of {', '.join(SANDBOX_MODES)}: required (the default) refuses to launch "
        "where the kernel offers no sandbox, if-available launches unsandboxed there, off never sandboxes"
    )


def _check_actions(scope: Scope) -> None:
    authorised_actions(scope.actions)
    index = [action for action in scope.actions if action in INDEX_ACTIONS]
    if index and scope.workspace == "current" and scope.sandbox == "required":
        raise InvalidContent(
            f"a current task authorised to {', '.join(index)} cannot run in the kernel sandbox: git keeps the main "
            "tree's index beside its configuration and hooks, which no executor may write. Dispatch it with "
            "workspace=required and a worktree of its own, or with sandbox=off"
        )
    if len(scope.stop_conditions) > MAX_STOP_CONDITIONS:
        raise InvalidContent(f"at most {MAX_STOP_CONDITIONS} stop conditions; merge some into one line")
    for line in scope.stop_conditions:
        if not (line.strip() and line.strip() == line and line.isprintable() and len(line) <= MAX_STOP_CONDITION):
            raise InvalidContent(
                f"stop condition {line[:80]!r} must be one printable line of at most {MAX_STOP_CONDITION} "
                "characters, without leading or trailing spaces"
            )
        if "`" in line:
            raise InvalidContent(f"stop condition {line[:80]!r} holds a backtick; write it without code spans")


def _check_workspace(kind: Kind, scope: Scope) -> None:
    if scope.worktree and (kind == "implementation" and scope.workspace != "required"):
        raise InvalidContent("a worktree is for a 'required' implementation task (or a read-only one); drop it")
    if scope.worktree and not (scope.worktree.startswith("/") and scope.worktree.isprintable()):
        raise InvalidContent(f"worktree {scope.worktree!r} must be the absolute path of a linked worktree")
    if scope.worktree and not scope.branch:
        raise InvalidContent("worktree and branch go together: give the linked worktree and its checked-out branch")
    if scope.branch and not scope.worktree and (kind != "implementation" or scope.workspace != "required"):
        raise InvalidContent(
            "a branch without a worktree is pushed to the git remote: only a 'required' implementation task has one"
        )
    if scope.remote and (scope.worktree or not scope.branch or not _REMOTE.fullmatch(scope.remote)):
        raise InvalidContent(f"remote {scope.remote!r} goes with a branch and no worktree, and is a remote's name")
    if scope.branch and not (scope.branch.isprintable() and " " not in scope.branch):
        raise InvalidContent(f"branch {scope.branch!r} is not a branch name")
    if scope.base and not _COMMIT.match(scope.base):
        raise InvalidContent("base must be a full commit id")
    if len(scope.dirty) > MAX_DIRTY or not all(path.isprintable() for path in scope.dirty):
        raise InvalidContent(f"at most {MAX_DIRTY} printable dirty paths are recorded")


_REF = compile_on_use(r"^[a-z0-9-]+/[0-9TZ-]+/[0-9]+-[a-z0-9-]+\Z")


def _check_links(kind: Kind, scope: Scope) -> None:
    for key in ("retry_of", "review_of"):
        if (value := getattr(scope, key)) and not _REF.match(value):
            raise InvalidContent(f"{key} {value!r} is not a task ref (change/session/task)")
    if scope.review_of and (kind not in REVIEWING_KINDS or not scope.base):
        raise InvalidContent("review_of is for a review or test-observation task, at a fixed base commit")
    if scope.self_writer and (scope.self_writer not in SELF_WRITERS or kind != "implementation"):
        raise InvalidContent(f"self_writer is one of {', '.join(SELF_WRITERS)}, on an implementation claim")


LINK_KEYS = ("retry_of", "review_of", "self_writer")  # the scope's links to other tasks, in the block's order
_SCOPE_KEYS = frozenset(
    {"workspace", "writable", "read_only", "shared", "artifacts", "resources", "worktree", "branch", "base"}
    | {"dirty_at_dispatch", "remote", "authorised_actions", "stop_conditions", "sandbox", *LINK_KEYS}
)


RESOURCE_RE = compile_on_use(r"^[a-z][a-z0-9-]*(?::[A-Za-z0-9._/@-]+)?\Z")


def _strings(data: dict[object, object], key: str) -> tuple[str, ...]:
    value = data.get(key) or []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise InvalidContent(f"handoff-scope {key} must be a list of glob strings; render the TASK again")
    return tuple(value)


def _string(data: dict[object, object], key: str) -> str:
    value = data.get(key) or ""
    if not isinstance(value, str):
        raise InvalidContent(f"handoff-scope {key} must be a string; render the TASK again")
    return value


def _shared_paths(data: dict[object, object]) -> tuple[SharedPath, ...]:
    value = data.get("shared") or []
    if not isinstance(value, list) or not all(
        isinstance(item, dict) and isinstance(item.get("path"), str) and isinstance(item.get("owner"), str)
        for item in value
    ):
        raise InvalidContent("handoff-scope shared must list {path, owner} strings; render the TASK again")
    return tuple(SharedPath(item["path"], item["owner"]) for item in value)


def scope_from(data: object, notes: str) -> Scope:
    """A scope block's values, every one of the type the renderer writes (a hand edit can hold anything)."""
    if not isinstance(data, dict) or not set(data) <= _SCOPE_KEYS:
        raise InvalidContent(
            "handoff-scope must map workspace, writable, read_only, shared, artifacts and resources only"
        )
    workspace = data.get("workspace")
    if workspace is not None and not isinstance(workspace, str):
        raise InvalidContent("handoff-scope workspace must be current or required")
    return Scope(
        workspace=workspace_of(workspace or ""),
        writable=_strings(data, "writable"),
        read_only=_strings(data, "read_only"),
        shared=_shared_paths(data),
        artifacts=_strings(data, "artifacts"),
        notes=notes,
        resources=_strings(data, "resources"),
        worktree=_string(data, "worktree"),
        branch=_string(data, "branch"),
        base=_string(data, "base"),
        dirty=_strings(data, "dirty_at_dispatch"),
        remote=_string(data, "remote"),
        actions=authorised_actions(_strings(data, "authorised_actions")),
        stop_conditions=_strings(data, "stop_conditions"),
        retry_of=_string(data, "retry_of"),
        review_of=_string(data, "review_of"),
        self_writer=_string(data, "self_writer"),
        sandbox=sandbox_mode(_string(data, "sandbox") or "required"),
    )


def read_scope(text: str) -> Scope | None:
    """Only the ``handoff-scope`` block of a TASK, without parsing the rest (used for claims).

    The renderer writes exactly one such block and refuses text that could open another, so a
    file with none or several is not ours as rendered: its scope is unreadable (None).
    """
    opener = f"\n{SCOPE_FENCE}\n"
    start = text.find(opener)
    end = text.find("\n```", start + 1) if start >= 0 else -1
    if end < 0 or text.count(opener) != 1:
        return None
    return _block_scope(text[start + len(SCOPE_FENCE) + 2 : end])


@lru_cache(maxsize=256)
def _block_scope(block: str) -> Scope | None:
    """A scope block's Scope, kept by its text: the tasks of a history repeat a few blocks, and a
    server's first claim scan reads every one of them (a Scope is a tuple of tuples: shared safely)."""
    try:
        return scope_from(load_yaml(block, "handoff-scope block"), "")
    except InvalidContent:
        return None

"""Report tokens: a capability to write exactly one task's REPORT.

The Lead derives each token as an HMAC of the task's identity under its own secret (kept outside
the repository, mode 0600), so it can print a lost token again. The TASK it publishes carries
only the token's sha256 (``token_check``), so any server that can read that TASK checks a token
without the Lead's secret: the same user under another HOME, another user, a container with the
project mounted, a linked worktree. What it protects against: guessing or reusing a token of
another task or another project (each TASK names its own hash). What it cannot: anyone who can
write the tree can write REPORT.md by hand; the files are evidence, not authentication.
"""

from __future__ import annotations

import base64
import errno
import hashlib
import hmac
import os
import secrets
import stat
import uuid
from pathlib import Path

from handoff_core.contract.anchor import TaskAnchor
from handoff_core.contract.ids import Ref, parse_ref
from handoff_core.errors import StorageError, TokenRefused, UnsafePath
from handoff_core.files.publishing import publish

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from handoff_core.services.tree.queries import Queries

__all__ = [
    "check_task_token",
    "check_token",
    "check_token_hash",
    "default_secret_path",
    "executor_session_id",
    "lead_anchor",
    "lead_token",
    "load_secret",
    "report_token",
    "reprinted_token",
    "task_anchor",
    "token_check",
]

_SECRET_BYTES = 32
_MIN_SECRET_BYTES = 16  # a shorter secret (cut short by hand) makes guessable tokens


def default_secret_path() -> Path:
    from handoff_core.layout import default_secret_file

    return Path(default_secret_file(os.environ))


def report_token(secret: bytes, state_root: Path, ref: Ref) -> str:
    message = "\0".join([str(Path(state_root).absolute()), ref.change, ref.session, ref.task]).encode()
    digest = hmac.new(secret, message, hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest[:18]).decode()


def lead_token(secret: bytes, state_root: Path) -> str:
    """The Lead's bearer token for the HTTP team server of one state root (printed by ``token --lead``)."""
    message = "\0".join(["lead", str(Path(state_root).absolute())]).encode()
    return base64.urlsafe_b64encode(hmac.new(secret, message, hashlib.sha256).digest()[:24]).decode()


def task_anchor(secret: bytes, state_root: Path, secret_file: Path) -> TaskAnchor:
    """What the Lead's secret (read from ``secret_file``) recomputes for one state root: the TASK anchors'
    key and each task's signing key; and whether it governs the state root, by the record beside it."""
    from handoff_core.contract.proof import signing_key
    from handoff_core.services.capabilities.governance import Governance

    message = "\0".join(["task-anchor", str(Path(state_root).absolute())]).encode()
    key = hmac.new(secret, message, hashlib.sha256).digest()
    governance = Governance(secret_file, key, state_root)
    return TaskAnchor(
        key,
        lambda ref: signing_key(report_token(secret, state_root, parse_ref(ref))),
        governance.holds,
        governance.record,
        governance.holds(),
    )


def lead_anchor(secret_file: Path, project_root: Path, state_root: Path) -> TaskAnchor | None:
    """The anchor of the Lead's secret for a reader, or None when there is no secret yet (then no TASK
    was anchored by it: the Lead's server makes it before its first dispatch). A reader never makes it; one
    that cannot tell whether it exists is refused (a check that cannot decide denies)."""
    try:
        if not Path(secret_file).exists():
            return None
    except OSError as exc:
        raise StorageError(
            f"cannot look for the token secret {secret_file}: {exc.strerror}; check --secret-file"
        ) from exc
    return task_anchor(load_secret(secret_file, project_root, create=False), state_root, secret_file)


def executor_session_id(token: str) -> str:
    """The session id an executor's Claude Code launch pins (``--session-id``): derived from its report
    token, so the Lead's server finds the executor's log from what it published, with no file of its own."""
    digest = hashlib.sha256(b"handoff-executor-session\0" + token.encode("utf-8", "replace")).digest()
    return str(uuid.UUID(bytes=digest[:16], version=4))


def token_check(token: str) -> str:
    """What a TASK records of its report token: a hash, never the token."""
    return "sha256:" + hashlib.sha256(b"handoff-report-token\0" + token.encode("utf-8", "replace")).hexdigest()


def _refused(ref: Ref) -> TokenRefused:
    return TokenRefused(
        f"the report token does not belong to {ref}: use the token from this task's dispatch message; "
        "the Lead can print it again with `handoff-mcp token REF`"
    )


def check_token_hash(expected: str, ref: Ref, token: str) -> None:
    """Check ``token`` against the hash the task's TASK.md records (no secret needed)."""
    given = token_check(token.strip()).encode()
    if not token or not hmac.compare_digest(expected.encode(), given):
        raise _refused(ref)


def check_token(secret: bytes, state_root: Path, ref: Ref, token: str) -> None:
    expected = report_token(secret, state_root, ref).encode()
    # Bytes, not str: compare_digest refuses a str with non-ASCII characters by raising.
    if not token or not hmac.compare_digest(expected, token.strip().encode("utf-8", "replace")):
        raise _refused(ref)


def check_task_token(queries: Queries, ref: Ref, token: str, secret: Callable[[], bytes]) -> None:
    """A report token checked against the hash its TASK records; a TASK from before hashes were
    recorded falls back to the Lead's ``secret`` (read only then)."""
    from handoff_core.errors import NotFound

    try:
        task, _ = queries.read_task(ref)
    except NotFound:  # say no more about a task than a wrong token would
        task = None
    if task is None:
        raise TokenRefused(f"the report token does not belong to {ref}; check the ref in your dispatch message")
    if task.token_check is not None:
        check_token_hash(task.token_check, ref, token)
    else:
        check_token(secret(), queries.roots.state_root, ref, token)


def _create_secret(path: Path) -> None:
    """Published write-once like a handoff file: a crash never leaves a short secret, and a secret
    another server made first is kept."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        publish(fd, path.name, secrets.token_bytes(_SECRET_BYTES), mode=0o600, first_wins=True)
    finally:
        os.close(fd)


def load_secret(path: Path, forbidden_root: Path | None = None, *, create: bool = True) -> bytes:
    """The secret at ``path`` (created with mode 0600 on first use), never inside ``forbidden_root``.

    ``create=False`` when a token is read again: a secret made now derives nothing ever handed out."""
    path = Path(path).absolute()
    # Compared after resolving '..' and symlinks on both sides: a lexical check is fooled by either.
    if forbidden_root is not None and path.resolve().is_relative_to(Path(forbidden_root).resolve()):
        raise UnsafePath(f"the token secret {path} lies inside the project; point --secret-file outside it")
    try:
        if not path.exists() and not create:
            raise TokenRefused(
                f"there is no token secret at {path}, so no token was ever derived from it: pass the secret file "
                "of the Lead's server that dispatched the task (--secret-file or HANDOFF_SECRET_FILE; another HOME "
                "has another ~/.config)"
            )
        if not path.exists():
            _create_secret(path)
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_mode & 0o077:
                raise UnsafePath(f"the token secret {path} must be a regular file with mode 0600")
            data = os.read(fd, 4096)
        finally:
            os.close(fd)
    except OSError as exc:
        reason = "is a symlink" if exc.errno == errno.ELOOP else exc.strerror
        raise StorageError(f"cannot use the token secret {path}: {reason}; check --secret-file") from exc
    if len(data) < _MIN_SECRET_BYTES:
        raise StorageError(f"the token secret {path} is too short; delete it to have a new one made")
    return data


def reprinted_token(secret_file: Path, project_root: Path, state_root: Path, ref: Ref, check: str | None) -> str:
    """A task's report token again, refused unless ``secret_file`` is the secret its TASK's check line was
    derived from (a TASK without a check line has nothing to hold it to)."""
    token = report_token(load_secret(secret_file, project_root, create=False), state_root, ref)
    if check is not None and not hmac.compare_digest(token_check(token).encode(), check.encode()):
        raise TokenRefused(
            f"the token secret {Path(secret_file).absolute()} is not the one {ref} was dispatched with (its TASK's "
            "check line does not match): pass the secret file of the Lead's server that dispatched it "
            "(--secret-file or HANDOFF_SECRET_FILE)"
        )
    return token

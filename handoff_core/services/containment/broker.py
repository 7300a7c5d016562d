"""The sandbox's broker: the one process of a sandboxed launch outside the sandbox, which publishes
what the executor may publish and nothing else.

Inside the sandbox the state root is read-only, so the executor's server and hooks ask the broker,
at the loopback address and key its launch hands the sandbox (``$HANDOFF_BROKER``), for the writes their
tools make: the task's REPORT (``write_report``, checked against its token here again: whoever
reaches the socket is not trusted), a session handoff (``write_handoff``), and the Stop hook's
records, which a sandboxed executor can then neither reset nor forge. It serves one task only, one
request at a time, each bounded in size and time; every refusal goes back as its stable code.
"""

from __future__ import annotations

import hmac
import select
import socket
from pathlib import Path

from handoff_core.contract.ids import Ref, parse_ref
from handoff_core.contract.report import Report
from handoff_core.errors import HandoffError, InvalidArguments, TokenRefused, error_for
from handoff_core.files.local_socket import KEY_FIELD, SocketUnanswered, ask, read_message, write_message
from handoff_core.files.task_dir import StoredFile
from handoff_core.services.capabilities.tokens import check_task_token, load_secret
from handoff_core.services.evidence import endings
from handoff_core.services.handoffs import session_handoff
from handoff_core.services.writing.store import Store, StoredDocument

__all__ = ["Broker", "brokered_handoff", "brokered_report", "serve"]

ANSWER_BOUND_S = 60.0  # a publish takes milliseconds; the broker's first one loads the store's code


def _asked(path: str, request: dict[str, object]) -> dict[str, object]:
    try:
        answer = ask(path, request, ANSWER_BOUND_S)
    except SocketUnanswered as exc:
        from handoff_core.errors import StorageError

        raise StorageError(
            f"the sandbox's broker did not answer ({exc}); nothing was written. End the session and launch it again"
        ) from exc
    if isinstance(error := answer.get("error"), dict):
        raise error_for(str(error.get("code", "")))(str(error.get("message", "")))
    return answer


def brokered_report(
    path: str, ref: Ref, token: str, report: Report, task_sha256: str | None, accept_warnings: bool
) -> StoredFile:
    """``write_report`` through the broker at ``path``; the answer the store would give."""
    fields = {name: getattr(report, name) for name in Report._fields}
    request = {"op": "write_report", "ref": str(ref), "token": token, "report": fields}
    answer = _asked(path, request | {"task_sha256": task_sha256, "accept_warnings": accept_warnings})
    return StoredFile(
        ref=ref,
        path=Path(str(answer["path"])),
        sha256=str(answer["sha256"]),
        created=bool(answer["created"]),
        text=str(answer.get("text", "")),
    )


def brokered_handoff(path: str, doc: session_handoff.HandoffDoc, redact: bool) -> StoredDocument:
    fields = {name: getattr(doc, name) for name in doc.__dataclass_fields__}
    answer = _asked(path, {"op": "write_handoff", "doc": fields, "redact": redact})
    return StoredDocument(path=Path(str(answer["path"])), sha256=str(answer["sha256"]))


class Broker:
    """What one sandboxed task may have written outside its sandbox."""

    def __init__(self, ref: Ref, project_root: Path, state_root: Path, secret_file: Path) -> None:
        self.ref, self.secret_file = ref, secret_file
        self.project_root, self.state_root = project_root, state_root
        self._store: Store | None = None

    @property
    def store(self) -> Store:
        if self._store is None:
            self._store = Store(self.state_root, self.project_root)
        return self._store

    def _own(self, value: object) -> Ref:
        ref = parse_ref(value) if isinstance(value, str) else None
        if ref != self.ref:
            raise TokenRefused(f"this sandbox's broker publishes for {self.ref} only")
        return ref

    def answer(self, request: dict[str, object]) -> dict[str, object]:
        op = request.get("op")
        if op == "write_report":
            return self._report(request)
        if op == "write_handoff":
            doc = request.get("doc")
            doc = doc if isinstance(doc, dict) else {}
            handoff = session_handoff.HandoffDoc(
                scope=_text(doc, "scope"),
                topic=_text(doc, "topic"),
                focused=_text(doc, "focused"),
                details=_text(doc, "details"),
                references=_texts(doc, "references"),
                skills=_texts(doc, "skills"),
                history=_text(doc, "history"),
            )
            stored = session_handoff.publish(self.store, handoff, request.get("redact") is True)
            return {"path": str(stored.path), "sha256": stored.sha256}
        if op in ("count_block", "record_ending"):
            return self._ending(str(op), request)
        raise TokenRefused(f"the broker does not {str(op)[:40]!r}")

    def _report(self, request: dict[str, object]) -> dict[str, object]:
        ref, token = self._own(request.get("ref")), request.get("token")
        if not isinstance(token, str) or not isinstance(fields := request.get("report"), dict):
            raise TokenRefused("write_report needs the task's report token")
        check_task_token(self.store.queries, ref, token, lambda: load_secret(self.secret_file, self.project_root))
        checkpoint = fields.get("source_checkpoint")
        report = Report(
            session=_text(fields, "session"),
            task=_text(fields, "task"),
            status=_text(fields, "status"),
            focused=_text(fields, "focused"),
            artifacts=_text(fields, "artifacts"),
            verification=_text(fields, "verification"),
            unverified=_text(fields, "unverified"),
            problems=_text(fields, "problems"),
            source_checkpoint=_text(fields, "source_checkpoint") if checkpoint is not None else None,
        )
        if (report.session, report.task) != (ref.session, ref.task):  # the store publishes where these point
            raise TokenRefused(f"this sandbox's broker publishes the REPORT of {ref} only")
        sha = request.get("task_sha256")
        stored = self.store.write_report(
            report, ref.change, sha if isinstance(sha, str) else None, bool(request.get("accept_warnings")), token
        )
        return {"path": str(stored.path), "sha256": stored.sha256, "created": stored.created, "text": stored.text}

    def _ending(self, op: str, request: dict[str, object]) -> dict[str, object]:
        session = request.get("session_id")
        if not isinstance(session, str) or not session or len(session) > 200:  # noqa: PLR2004 - a CLI's id
            raise TokenRefused("a stop record names its session")
        state, ref = str(self.state_root), str(self._own(request.get("ref")))
        if op == "count_block":
            return {"count": endings.count_block(state, ref, session)}
        endings.record_ending(state, ref, session)
        return {}


def _text(fields: dict[object, object], name: str) -> str:
    value = fields.get(name, "")
    if not isinstance(value, str):
        raise InvalidArguments(f"{name} must be text")
    return value


def _texts(fields: dict[object, object], name: str) -> tuple[str, ...]:
    value = fields.get(name) or []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise InvalidArguments(f"{name} must be a list of text")
    return tuple(value)


def serve(listener: socket.socket, broker: Broker, key: str, until: int) -> None:
    """Answer each connection in turn until ``until`` (a pidfd of the sandboxed command) is readable:
    the command ended. A request without ``key`` (the launch handed it to the sandbox alone) is
    refused unread: a port on the loopback interface is open to every local process."""
    while True:
        ready, _, _ = select.select([listener.fileno(), until], [], [])
        if until in ready:
            return
        conn, _ = listener.accept()
        with conn:
            try:
                request = read_message(conn, ANSWER_BOUND_S)
                try:
                    if not hmac.compare_digest(str(request.pop(KEY_FIELD, "")).encode(), key.encode()):
                        raise TokenRefused("this broker answers its own sandbox only")
                    answer = broker.answer(request)
                except HandoffError as exc:
                    answer = {"error": {"code": exc.code, "message": exc.message}}
                except (TypeError, ValueError, KeyError) as exc:
                    answer = {"error": {"code": "invalid_arguments", "message": f"a malformed request ({exc})"}}
                write_message(conn, answer)
            except (OSError, SocketUnanswered):
                continue  # a client that went away or sent garbage: the next one is served

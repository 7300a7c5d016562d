"""``POST /executor/stop``: the Stop hook of an executor elsewhere asks the team server whether its
session may end (``evidence.stop_check``), and the team server keeps the count of its blocks and the
record of an end without a REPORT where the executor cannot write and the Lead reads them: the
Lead's own cache on this host (``evidence.endings``), which ``handoff_status`` reads.

The bearer is the task's report token (the same ``TaskVerifier`` as ``/executor/mcp``): it opens
its own task only. The body is one small JSON object, ``{"ref", "session_id", "stop_hook_active"}``,
read bounded; the answer is ``{"block": true|false}``. A missing or wrong token is 401 (counted by
the refusal limit like any other), another task's ref 403, a malformed body 400.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
from mcp.server.auth.provider import TokenVerifier
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from handoff_core.contract.ids import parse_ref
from handoff_core.errors import HandoffError
from handoff_core.layout import REPORT_FILE
from handoff_core.services.evidence.endings import stop_blocks
from handoff_core.services.tree.queries import Queries

__all__ = ["MAX_STOP_BODY", "stop_route"]

MAX_STOP_BODY = 4096  # a ref, a CLI's session id and a flag
_SESSION = 200  # a CLI's session id is far shorter


def _refused(status: int, error: str, said: str) -> Response:
    headers = {"WWW-Authenticate": 'Bearer error="invalid_token"'} if status == 401 else None  # noqa: PLR2004
    return JSONResponse({"error": error, "error_description": said}, status_code=status, headers=headers)


async def _body(request: Request) -> dict[str, object] | None:
    data = b""
    async for chunk in request.stream():
        data += chunk
        if len(data) > MAX_STOP_BODY:
            return None
    try:
        found = json.loads(data)
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def stop_route(queries: Queries, state_root: Path, verifier: TokenVerifier) -> Route:
    """The route, judging with ``queries`` over ``state_root`` and tokens by ``verifier``."""

    async def stop(request: Request) -> Response:
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        access = await verifier.verify_token(token.strip()) if scheme.lower() == "bearer" else None
        if access is None or access.claims is None:
            return _refused(401, "invalid_token", "the bearer is not a task's report token")
        body = await _body(request)
        session, active = (body or {}).get("session_id"), (body or {}).get("stop_hook_active", False)
        if body is None or not isinstance(session, str) or len(session) > _SESSION or not isinstance(active, bool):
            return _refused(400, "invalid_request", "send {ref, session_id, stop_hook_active} as one JSON object")
        if body.get("ref") != access.claims.get("ref"):
            return _refused(403, "scope_refused", "a task's token answers for its own task only")
        ref = parse_ref(str(body["ref"]))

        def decide() -> bool:
            try:
                if queries.read_optional(ref, REPORT_FILE) is not None:
                    return False
            except HandoffError:
                pass  # its folder cannot be read: no REPORT is known, so its end is counted
            return stop_blocks(str(state_root), str(ref), session, active)

        return JSONResponse({"block": await anyio.to_thread.run_sync(decide)})

    return Route("/executor/stop", stop, methods=["POST"])

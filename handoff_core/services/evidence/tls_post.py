"""One POST to an ``https://`` team server, through ``http.client`` and ``ssl``: bounded in time and bytes.

Only an executor whose team server is reached over TLS loads these (~10 ms and more at each hook
start); a plain ``http://`` URL goes over ``files.plain_http``. The certificate is checked as
``ssl``'s default context checks it; a failure is a ``TeamServerError``, which a hook turns into a deny.
"""

from __future__ import annotations

import http.client
import time
from urllib.parse import urlsplit

from handoff_core.errors import TeamServerError

__all__ = ["tls_post"]


def tls_post(url: str, data: bytes, headers: dict[str, str], timeout: float, limit: int) -> tuple[int, str, bytes]:
    """POST ``data`` to the ``https://`` ``url``: (status, content type, answer of at most ``limit`` bytes)."""
    parts = urlsplit(url)
    if parts.scheme != "https" or not parts.hostname:
        raise TeamServerError(f"--url {url[:200]!r} is not an http(s) URL of the team server's executor endpoint")
    deadline = time.monotonic() + timeout
    connection = http.client.HTTPSConnection(parts.hostname, parts.port, timeout=timeout)
    try:
        connection.request("POST", parts.path or "/", body=data, headers=headers)
        response = connection.getresponse()
        answer, chunk = b"", b"."
        while chunk and len(answer) <= limit:
            if (left := deadline - time.monotonic()) <= 0:
                raise TeamServerError(f"the team server did not answer within {timeout:g} s")
            if connection.sock is not None:
                connection.sock.settimeout(left)
            chunk = response.read1(1 << 16)
            answer += chunk
    except (OSError, http.client.HTTPException) as exc:
        raise TeamServerError(f"cannot reach the team server at {url[:200]}: {exc}") from exc
    finally:
        connection.close()
    if len(answer) > limit:
        raise TeamServerError(f"the team server's answer is over {limit} bytes")
    return response.status, (response.getheader("Content-Type", "") or "").lower(), answer

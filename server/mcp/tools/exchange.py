"""The external-web exchange for the Lead: package_dispatch and receive_return."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Annotated

from mcp.server.mcpserver.tools import Tool
from pydantic import Field

from handoff_core.contract.exchange import Channel, exclusion_lines
from handoff_core.contract.ids import parse_ref
from handoff_core.errors import InvalidContent
from handoff_core.files.paths import read_open
from handoff_core.services.exchange import package_dispatch as package
from handoff_core.services.exchange import receive_return as receive
from server.mcp.models import Packaged, ReturnReceived
from server.mcp.params import RefArg
from server.mcp.registration import CREATE, tool
from server.mcp.services import Services

__all__ = ["MAX_RETURN_BYTES", "read_download", "tools"]

MAX_RETURN_BYTES = 256 * 1024 * 1024
Ids = Annotated[str, Field(description="[A-Za-z0-9._-]")]


def read_download(path: str) -> bytes:
    """A downloaded return, read once and bounded; a FIFO, device or link is refused, never followed."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise InvalidContent(f"cannot open {path}: {exc.strerror}; give the downloaded file's real path") from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InvalidContent(f"{path} is not a regular file")
        data = read_open(fd, info.st_size, MAX_RETURN_BYTES)
    finally:
        os.close(fd)
    if len(data) > MAX_RETURN_BYTES:
        raise InvalidContent(f"{path} is over {MAX_RETURN_BYTES} bytes: not a return this server accepts")
    return data


def tools(services: Services) -> list[Tool]:
    store, queries = services.store, services.queries
    project = Path(services.settings.project_root)

    def package_dispatch(
        ref: RefArg,
        scope_id: Ids,
        dispatch_id: Ids,
        files: Annotated[list[str], Field(description="project-relative files or folders to send")] = [],  # noqa: B006
        allowed_domains: list[str] = [],  # noqa: B006
        channel_tools: list[str] = [],  # noqa: B006
    ) -> Packaged:
        """Seal the task as an outbound ZIP for an external web channel (secrets and caches left out)."""
        task, _ = queries.read_task(parse_ref(ref))
        channel = Channel(tuple(allowed_domains), tuple(channel_tools))
        sealed = package(project, task, scope_id, dispatch_id, files, channel, store.clock())
        return Packaged(
            locator=sealed.locator,
            size=sealed.size,
            sha256=sealed.sha256,
            included=len(sealed.included),
            excluded=exclusion_lines(sealed.excluded),
        )

    def receive_return(
        scope_id: Ids,
        task_id: Ids,
        dispatch_id: Ids,
        attempt_id: Ids,
        raw_file: Annotated[str, Field(description="absolute path of the downloaded ZIP")] = "",
        text: Annotated[str, Field(description="a text-only answer, verbatim")] = "",
    ) -> ReturnReceived:
        """Persist a return raw, check it whole, and only then extract it (untrusted)."""
        if bool(raw_file) == bool(text):
            raise InvalidContent("give either raw_file (a downloaded ZIP) or text (a text-only answer)")
        raw = read_download(raw_file) if raw_file else text.encode()
        got = receive(project, scope_id, task_id, dispatch_id, attempt_id, raw, is_text=bool(text))
        return ReturnReceived(
            raw=got.raw_locator, raw_sha256=got.raw_sha256, standard=got.return_locator, extracted=got.extracted_files
        )

    return [tool(package_dispatch, CREATE), tool(receive_return, CREATE)]

"""The external-web exchange for the Lead: package_dispatch and receive_return."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from mcp.server.mcpserver.tools import Tool
from pydantic import Field

from handoff_core.contract.ids import parse_ref
from handoff_core.errors import InvalidContent
from server.mcp.models import Packaged, ReturnReceived
from server.mcp.params import RefArg
from server.mcp.registration import CREATE, ServicesArg, tool

__all__ = ["package_dispatch", "receive_return", "tools"]

Ids = Annotated[str, Field(description="[A-Za-z0-9._-]")]


def package_dispatch(
    ref: RefArg,
    scope_id: Ids,
    dispatch_id: Ids,
    services: ServicesArg,
    files: Annotated[list[str], Field(description="project-relative paths")] = [],  # noqa: B006
    allowed_domains: list[str] = [],  # noqa: B006
    channel_tools: list[str] = [],  # noqa: B006
) -> Packaged:
    """Seal a task as a ZIP for an external web channel."""
    from handoff_core.contract.exchange import Channel, exclusion_lines
    from handoff_core.services.exchange.outbound import package_dispatch as package

    task, _ = services.queries.read_task(parse_ref(ref))
    channel = Channel(tuple(allowed_domains), tuple(channel_tools))
    project = Path(services.settings.project_root)
    sealed = package(project, task, scope_id, dispatch_id, files, channel, services.store.clock())
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
    services: ServicesArg,
    raw_file: Annotated[str, Field(description="the downloaded ZIP")] = "",
    text: Annotated[str, Field(description="a text-only answer, verbatim")] = "",
    accept: Annotated[list[str], Field(description="files or 'folder/' to extract, read first")] = [],  # noqa: B006
) -> ReturnReceived:
    """Check a return whole; extract only what accept names."""
    from handoff_core.contract.exchange import kept_lines
    from handoff_core.contract.values import visible
    from handoff_core.services.exchange.returns import receive_file
    from handoff_core.services.exchange.returns import receive_return as receive

    if bool(raw_file) == bool(text):
        raise InvalidContent("give either raw_file (a downloaded ZIP) or text (a text-only answer)")
    ids = (Path(services.settings.project_root), scope_id, task_id, dispatch_id, attempt_id)
    if raw_file:
        got = receive_file(*ids, path=raw_file, forbidden=services.settings.private_files, accept=accept)
    else:
        got = receive(*ids, text.encode(), is_text=True)
    return ReturnReceived(
        raw=got.raw_locator,
        raw_sha256=got.raw_sha256,
        standard=got.return_locator,
        extracted=got.extracted_files,
        kept=[visible(line) for line in kept_lines(got.kept, got.return_locator)],
        held=[visible(f"{name}: {why}") for name, why in got.held],
    )


def tools() -> list[Tool]:
    return [tool(package_dispatch, CREATE), tool(receive_return, CREATE)]

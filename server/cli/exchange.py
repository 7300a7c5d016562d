"""``handoff-mcp package`` and ``receive``: the external-web exchange from the shell, through the core."""

from __future__ import annotations

import argparse
from pathlib import Path

from handoff_core.contract.ids import parse_ref
from handoff_core.contract.values import visible
from server.config import Settings
from server.mcp.services import open_store

__all__ = ["exchange"]


def exchange(settings: Settings, args: argparse.Namespace) -> int:
    from handoff_core.contract.exchange import Channel, kept_lines
    from handoff_core.services.exchange.outbound import package_dispatch
    from handoff_core.services.exchange.returns import receive_file

    store = open_store(settings)
    if args.command == "package":
        task, _ = store.queries.read_task(parse_ref(args.ref))
        channel = Channel(tuple(args.domains))
        sealed = package_dispatch(
            settings.project_root, task, args.scope, args.dispatch, args.files, channel, store.clock()
        )
        print(f"{sealed.locator}  {sealed.size} bytes  sha256 {sealed.sha256}")
        for item in sealed.excluded:
            print(visible(f"  excluded {item['path']}: {item['reason']}"))
        return 0
    ids = (settings.project_root, args.scope, args.task, args.dispatch, args.attempt)
    path = str(Path(args.file or args.text_file).absolute())
    got = receive_file(
        *ids, path=path, forbidden=settings.private_files, is_text=bool(args.text_file), accept=args.accept
    )
    print(
        f"raw {got.raw_locator} (sha256 {got.raw_sha256}); return {got.return_locator}; "
        f"{got.extracted_files} file(s) extracted, {len(got.kept)} kept only in the return ZIP"
    )
    for line in kept_lines(got.kept, got.return_locator):
        print(f"  kept: {visible(line)}")
    if got.kept:
        print("  read them in the return ZIP; --accept PATH (or FOLDER/) on a new attempt extracts them")
    for name, why in got.held:
        print(f"  held: {visible(f'{name}: {why} (only --accept {name} extracts it)')}")
    return 0

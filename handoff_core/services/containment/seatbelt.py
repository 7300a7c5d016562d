"""macOS: the same grants as a Seatbelt profile for ``sandbox-exec -p``.

Seatbelt can deny beneath an allowed folder, Landlock cannot; the profile is still drawn from the
grants Landlock gets, so both contain the executor alike: every write denied but the granted paths,
the secret (and, without push, the push credentials) unreadable, TCP connects to the granted ports
only. Tested by its text: no macOS runs the tests.
"""

from __future__ import annotations

import json

from handoff_core.services.containment.grants import Grants

__all__ = ["profile"]


def _quoted(path: str) -> str:
    return json.dumps(path)  # SBPL strings are double-quoted with backslash escapes, as JSON's are


def profile(grants: Grants) -> str:
    lines = ["(version 1)", "(allow default)", '(deny file-write* (subpath "/"))']
    lines += [f"(allow file-write* (subpath {_quoted(grant.path)}))" for grant in grants.write]
    lines += [f"(deny file-read* (subpath {_quoted(path)}))" for path in grants.read_denied]
    if grants.connect is not None:
        lines.append("(deny network-outbound (remote tcp))")
        lines += [f'(allow network-outbound (remote tcp "*:{port}"))' for port in grants.connect]
    return "\n".join(lines) + "\n"

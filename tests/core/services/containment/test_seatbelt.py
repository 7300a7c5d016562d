"""macOS: the grants as a Seatbelt profile, tested by its text (no macOS runs the tests)."""

from __future__ import annotations

from handoff_core.services.containment.grants import Grant, Grants
from handoff_core.services.containment.seatbelt import profile


def grants(connect: tuple[int, ...] | None) -> Grants:
    write = (Grant("/p", ("src", "a1"), "writable src/a1/**"), Grant("/home/x", ('we"ird',), "home"))
    return Grants(write=write, read_denied=("/u/.config/handoff-mcp/secret",), connect=connect, notes=(), drop_env=())


def test_every_write_is_denied_but_the_granted_paths_and_the_secret_is_unreadable() -> None:
    text = profile(grants((443, 8080)))
    lines = text.splitlines()
    assert lines[:3] == ["(version 1)", "(allow default)", '(deny file-write* (subpath "/"))']
    # Later rules win in Seatbelt: each grant comes after the denial it lifts.
    assert lines.index('(allow file-write* (subpath "/p/src/a1"))') > 2
    assert '(allow file-write* (subpath "/home/x/we\\"ird"))' in lines  # quoted, never closing the string early
    assert '(deny file-read* (subpath "/u/.config/handoff-mcp/secret"))' in lines
    assert lines[-3:] == [
        "(deny network-outbound (remote tcp))",
        '(allow network-outbound (remote tcp "*:443"))',
        '(allow network-outbound (remote tcp "*:8080"))',
    ]


def test_with_push_every_port_is_reachable() -> None:
    assert "network-outbound" not in profile(grants(None))

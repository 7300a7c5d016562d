"""The configuration git runs under here, laid over the repository's own: the repository's config
(``.git/config``, a worktree's ``config.worktree``, any file they include), its attributes and its
index are written by whoever works in it, so nothing there may start a command, answer which files
changed, or pick a transport. Command-line configuration beats every file git reads; a value git
keys by a name the repository chooses (a filter driver, a protocol) is overruled name by name, from
a listing of the repository's config (``git config --get-regexp``, which runs nothing).
"""

from __future__ import annotations

import os

__all__ = ["FIXED", "LISTED", "PROTOCOLS", "USER_LEVEL_DROPPED", "overrides"]

PROTOCOLS = ("file", "ssh", "https", "http")  # git's own transports; a remote helper is never started
FIXED: tuple[tuple[str, str], ...] = (
    ("core.quotePath", "false"),
    ("core.hooksPath", os.devnull),
    ("diff.external", ""),
    ("color.ui", "false"),
    ("core.fsmonitor", "false"),  # a hook that answers which paths changed: it could answer "none"
    ("core.untrackedCache", "false"),
    ("core.attributesFile", os.devnull),
    ("core.excludesFile", os.devnull),  # the user-level ignore file too: only .gitignore files hide a path
    ("core.ignoreStat", "false"),
    ("core.trustctime", "true"),
    ("core.checkStat", "default"),
    ("core.fileMode", "true"),
    ("core.autocrlf", "false"),
    ("core.safecrlf", "false"),
    ("core.sparseCheckout", "false"),
    ("index.sparse", "false"),
    ("diff.autoRefreshIndex", "true"),
    ("core.askPass", ""),
    ("credential.helper", ""),  # an empty helper clears every helper read before it, per-URL ones too
    ("core.sshCommand", "ssh"),
    ("core.alternateRefsCommand", ""),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    ("fetch.recurseSubmodules", "false"),
    ("submodule.recurse", "false"),
    ("protocol.allow", "never"),  # then the transports git ships, by name; git:// could go through core.gitProxy
    *((f"protocol.{name}.allow", "always") for name in PROTOCOLS),
    ("protocol.git.allow", "never"),
    ("protocol.ext.allow", "never"),
)
USER_LEVEL_DROPPED = ("core.hooksPath",)  # a location query with the user's config asks where hooks run
# The names git reads that the repository chooses: filter.<driver>.* and protocol.<name>.allow.
LISTED = r"^(filter\..*\.(clean|smudge|process|required)|protocol\..*\.allow)$"
_FILTER = {"clean": "", "smudge": "", "process": "", "required": "false"}  # empty: git runs no filter


def overrides(listing: bytes) -> dict[str, str]:
    """``GIT_CONFIG_COUNT``/``KEY_n``/``VALUE_n`` (command-line level, keys never split on ``=``) that
    neutralise each filter driver and close each protocol the repository's config names in
    ``listing`` (``git config -z --get-regexp LISTED``: ``key\\nvalue\\0`` records)."""
    keys: dict[str, str] = {}
    for record in listing.split(b"\0"):
        key = record.partition(b"\n")[0].decode("utf-8", "surrogateescape")
        section, _, rest = key.partition(".")
        name = rest.rpartition(".")[0]
        if section == "filter" and name:
            keys |= {f"filter.{name}.{field}": value for field, value in _FILTER.items()}
        elif section == "protocol" and name and name.lower() not in PROTOCOLS:
            keys[f"protocol.{name}.allow"] = "never"
    env = {"GIT_CONFIG_COUNT": str(len(keys))}
    for index, (key, value) in enumerate(keys.items()):
        env |= {f"GIT_CONFIG_KEY_{index}": key, f"GIT_CONFIG_VALUE_{index}": value}
    return env

"""Secrets in text a handoff would persist, found by detect-secrets (a maintained detector) with
this project's plugins for newer key formats (``secret_plugins``).

The text is scanned in memory, line by line: it is never written to a temporary file, where a
crash would leave it behind. Newlines are normalised first (``\\r\\n`` and a lone ``\\r`` are line
breaks to the scanner too), so a finding's line number is the line redaction changes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from handoff_core.contract.markdown import normalise_newlines

__all__ = ["REDACTED", "Finding", "redact", "scan", "scan_all"]

_PRIVATE_KEY = re.compile(
    r"-----BEGIN [A-Z ]*PRIVATE KEY( BLOCK)?-----.*?(-----END [A-Z ]*PRIVATE KEY( BLOCK)?-----|\Z)", re.S
)
REDACTED = "[REDACTED]"
_PLUGINS = Path(__file__).with_name("secret_plugins.py")
_AS_FILE = "handoff.txt"  # plain text to the scanner; ``PlainPasswordFieldDetector`` covers YAML-style fields


@dataclass(frozen=True)
class Finding:
    field: str
    line: int
    kind: str
    value: str | None  # the secret as found (kept in memory only, for redaction)

    def describe(self) -> str:
        return f"{self.field} line {self.line}: {self.kind}"


_OURS = ("CurrentApiKeyDetector", "CredentialUrlDetector", "PlainPasswordFieldDetector")


def _config() -> dict[str, object]:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    plugin_types: list[type] = list(get_mapping_from_secret_type_to_class().values())
    builtin = [{"name": plugin.__name__} for plugin in plugin_types if plugin.__name__ not in _OURS]
    return {"plugins_used": [*builtin, *({"name": name, "path": f"file://{_PLUGINS}"} for name in _OURS)]}


def scan(field: str, text: str) -> list[Finding]:
    """Every secret the detectors find in ``text``, located by field and line (after newline normalisation)."""
    return scan_all([(field, text)])


def scan_all(items: list[tuple[str, str]]) -> list[Finding]:
    """``scan`` for many texts at once: the detectors are set up once, not once per text."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.core.scan import _process_line_based_plugins
    from detect_secrets.settings import get_plugins, transient_settings

    found: set[Finding] = set()
    with transient_settings(_config()):
        # The plugin map is cached before our file-based plugins are configured: rebuild it with them.
        get_mapping_from_secret_type_to_class.cache_clear()
        get_plugins.cache_clear()
        for field, text in items:
            lines = list(enumerate(normalise_newlines(text).split("\n"), start=1))
            for secret in _process_line_based_plugins(lines=lines, filename=_AS_FILE):
                found.add(Finding(field, secret.line_number, secret.type, secret.secret_value))
    return sorted(found, key=lambda f: (f.field, f.line, f.kind))


def redact(text: str, findings: list[Finding]) -> str:
    """Each finding's whole token replaced by [REDACTED]; private key blocks go whole."""
    lines = normalise_newlines(text).split("\n")
    for finding in findings:
        if finding.value and finding.kind != "Private Key" and 0 < finding.line <= len(lines):
            token = re.compile(r"[^\s\"']*" + re.escape(finding.value) + r"[^\s\"']*")
            lines[finding.line - 1] = token.sub(REDACTED, lines[finding.line - 1])
    return _PRIVATE_KEY.sub(REDACTED, "\n".join(lines))

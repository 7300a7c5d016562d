"""Secrets in text a handoff would persist, found by detect-secrets (a maintained detector)."""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass

__all__ = ["REDACTED", "Finding", "redact", "scan"]

_PRIVATE_KEY = re.compile(
    r"-----BEGIN [A-Z ]*PRIVATE KEY( BLOCK)?-----.*?(-----END [A-Z ]*PRIVATE KEY( BLOCK)?-----|\Z)", re.S
)
REDACTED = "[REDACTED]"


@dataclass(frozen=True)
class Finding:
    field: str
    line: int
    kind: str
    value: str | None  # the secret as found (kept in memory only, for redaction)

    def describe(self) -> str:
        return f"{self.field} line {self.line}: {self.kind}"


def scan(field: str, text: str) -> list[Finding]:
    """Every secret detect-secrets finds in ``text``, located by field and line."""
    from detect_secrets.core.secrets_collection import SecretsCollection
    from detect_secrets.settings import default_settings

    with tempfile.TemporaryDirectory(prefix="handoff-scan-") as folder:
        path = os.path.join(folder, "text.txt")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        with default_settings():
            collection = SecretsCollection()
            collection.scan_file(path)
        found = [(secret.line_number, secret.type, secret.secret_value) for _, secret in collection]
    return sorted({Finding(field, line, kind, value) for line, kind, value in found}, key=lambda f: (f.line, f.kind))


def redact(text: str, findings: list[Finding]) -> str:
    """Each finding's whole token replaced by [REDACTED]; private key blocks go whole."""
    lines = text.split("\n")
    for finding in findings:
        if finding.value and finding.kind != "Private Key" and 0 < finding.line <= len(lines):
            token = re.compile(r"[^\s\"']*" + re.escape(finding.value) + r"[^\s\"']*")
            lines[finding.line - 1] = token.sub(REDACTED, lines[finding.line - 1])
    return _PRIVATE_KEY.sub(REDACTED, "\n".join(lines))

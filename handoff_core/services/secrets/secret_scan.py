"""Secrets in text a handoff would persist, found by detect-secrets (a maintained detector) with
this project's plugins for newer key formats (``secret_plugins``).

The text is scanned in memory, line by line: it is never written to a temporary file, where a
crash would leave it behind. Newlines are normalised first (``\\r\\n`` and a lone ``\\r`` are line
breaks to the scanner too), so a finding's line number is the line redaction changes.

Only detect-secrets' public API is used: its plugin classes, each asked with ``analyze_line``, and
the heuristic filters of ``detect_secrets.filters.heuristic`` that its own scan applies to drop
sequences, UUIDs, ids and templated values; no global settings are changed. A base64 token that
decodes to text is scanned again as that text (once, not recursively), so a key wrapped for a
shell pipe is found too; the finding's value is the token, which redaction then replaces.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from handoff_core.contract.markdown import normalise_newlines

__all__ = ["REDACTED", "Finding", "redact", "scan", "scan_all"]

_PRIVATE_KEY = re.compile(
    r"-----BEGIN [A-Z ]*PRIVATE KEY( BLOCK)?-----.*?(-----END [A-Z ]*PRIVATE KEY( BLOCK)?-----|\Z)", re.S
)
REDACTED = "[REDACTED]"
_AS_FILE = "handoff.txt"  # plain text to the detectors; ``PlainPasswordFieldDetector`` covers YAML-style fields
# A run of base64 (standard or URL-safe) long enough to hide a key; 16 characters hold 12 bytes.
_BASE64 = re.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{16,4096}={0,2}(?![A-Za-z0-9+/=_-])")
ENCODED = " (base64-encoded)"


@dataclass(frozen=True)
class Finding:
    field: str
    line: int
    kind: str
    value: str | None  # the secret as found (kept in memory only, for redaction)

    def describe(self) -> str:
        return f"{self.field} line {self.line}: {self.kind}"


@lru_cache(maxsize=1)
def _detectors() -> tuple[Any, ...]:
    """One instance of every detect-secrets plugin class, then ours (set up once per process)."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    from handoff_core.services.secrets import secret_plugins

    classes: dict[str, type[Any]] = get_mapping_from_secret_type_to_class()
    builtin = [c for c in classes.values() if c.__module__.startswith("detect_secrets.")]
    ours = [getattr(secret_plugins, name) for name in secret_plugins.__all__]
    return tuple(plugin() for plugin in [*builtin, *ours])


def _ignored(secret: str, line: str, plugin: Any) -> bool:
    """The heuristics detect-secrets' own scan drops a value for: not a secret, or a reference to one."""
    from detect_secrets.filters import heuristic

    return (
        heuristic.is_sequential_string(secret)
        or heuristic.is_potential_uuid(secret)
        or heuristic.is_likely_id_string(secret, line, plugin)
        or heuristic.is_templated_secret(secret)
        or heuristic.is_prefixed_with_dollar_sign(secret)
        or heuristic.is_not_alphanumeric_string(secret)
    )


def _line_secrets(line: str) -> set[tuple[str, str]]:
    """``(kind, value)`` of every secret in one line."""
    from detect_secrets.filters.heuristic import is_indirect_reference

    line = line.rstrip()
    if not line.strip() or is_indirect_reference(line):
        return set()
    found: set[tuple[str, str]] = set()
    for plugin in _detectors():
        for secret in plugin.analyze_line(filename=_AS_FILE, line=line, line_number=1):
            value = secret.secret_value
            if value and not _ignored(value, line, plugin):
                found.add((secret.type, value))
    return found


def _decoded(token: str) -> str | None:
    """The text a base64 token stands for, or None when it is not base64 of printable text."""
    padded = token.replace("-", "+").replace("_", "/").rstrip("=")
    try:
        data = base64.b64decode(padded + "=" * (-len(padded) % 4), validate=True)
        text = data.decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    return text if text.strip() and all(c.isprintable() or c in "\n\t" for c in text) else None


def _wrapped_secrets(line: str) -> set[tuple[str, str]]:
    """Secrets inside the base64 tokens of a line, each named by the token that hides it."""
    found: set[tuple[str, str]] = set()
    for token in _BASE64.findall(line):
        if (text := _decoded(token)) is not None:
            inner = {kind for part in normalise_newlines(text).split("\n") for kind, _ in _line_secrets(part)}
            found |= {(kind + ENCODED, token) for kind in inner}
    return found


def scan(field: str, text: str) -> list[Finding]:
    """Every secret the detectors find in ``text``, located by field and line (after newline normalisation)."""
    return scan_all([(field, text)])


def scan_all(items: list[tuple[str, str]]) -> list[Finding]:
    """``scan`` for many texts at once."""
    found: set[Finding] = set()
    for field, text in items:
        for number, line in enumerate(normalise_newlines(text).split("\n"), start=1):
            for kind, value in _line_secrets(line) | _wrapped_secrets(line):
                found.add(Finding(field, number, kind, value))
    return sorted(found, key=lambda f: (f.field, f.line, f.kind))


def redact(text: str, findings: list[Finding]) -> str:
    """Each finding's whole token replaced by [REDACTED]; private key blocks go whole."""
    lines = normalise_newlines(text).split("\n")
    for finding in findings:
        if finding.value and finding.kind != "Private Key" and 0 < finding.line <= len(lines):
            token = re.compile(r"[^\s\"']*" + re.escape(finding.value) + r"[^\s\"']*")
            lines[finding.line - 1] = token.sub(REDACTED, lines[finding.line - 1])
    return _PRIVATE_KEY.sub(REDACTED, "\n".join(lines))

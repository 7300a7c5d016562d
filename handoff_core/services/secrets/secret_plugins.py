"""detect-secrets plugins for key formats its built-in detectors miss, loaded through its own
``plugins_used`` mechanism (``secret_scan`` names this file by path).

Each denylist keeps at most one group: the part that is the secret (what redaction replaces).
"""

from __future__ import annotations

import re

from detect_secrets.plugins.base import RegexBasedDetector

__all__ = ["CredentialUrlDetector", "CurrentApiKeyDetector", "PlainPasswordFieldDetector"]


class CurrentApiKeyDetector(RegexBasedDetector):
    """OpenAI project keys, Anthropic keys, Google API keys and GitHub fine-grained tokens, as issued today."""

    secret_type = "Current API Key"  # noqa: S105 - the name of a kind of secret
    denylist = (
        re.compile(r"(?<![A-Za-z0-9])(github_pat_[A-Za-z0-9_]{40,})"),
        re.compile(r"(?<![A-Za-z0-9])(sk-proj-[A-Za-z0-9_-]{20,})"),
        re.compile(r"(?<![A-Za-z0-9])(sk-ant-[a-z]+[0-9]{2}-[A-Za-z0-9_-]{20,})"),
        re.compile(r"(?<![A-Za-z0-9])(AIza[0-9A-Za-z_-]{35})"),
    )


class CredentialUrlDetector(RegexBasedDetector):
    """A password inside a URL: ``postgres://user:password@host``."""

    secret_type = "Credentials in URL"  # noqa: S105 - the name of a kind of secret
    denylist = (re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@]+:([^\s/@]+)@[^\s/@]"),)


class PlainPasswordFieldDetector(RegexBasedDetector):
    """``password: value`` as YAML, a config listing or a shell writes it (``export API_KEY=…``,
    ``set``, ``$env:``), indented or not, quoted or not; the name may carry a prefix and a suffix
    (``aws_secret_access_key``, ``DB_PASSWORD_FILE``)."""

    secret_type = "Password Field"  # noqa: S105 - the name of a kind of secret
    denylist = (
        re.compile(
            r"^\s*(?:export\s+|set\s+|setx\s+|\$env:)?[A-Za-z0-9_.-]*"
            r"(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token)[A-Za-z0-9_.-]*\s*[:=]\s*"
            r"(?![\"']?(?:none|null|true|false|changeme|redacted)\b)[\"']?([^\s\"'#]{4,})",
            re.IGNORECASE,
        ),
    )

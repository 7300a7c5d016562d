"""What an outbound package never carries, by name (seed 002 ``source-package.md`` § 3): version
control internals, caches, build output, logs, databases, browser profiles, secrets, keys,
archives and binaries. A file whose name passes is still scanned for secrets by content (the
services do that); each exclusion is listed in the manifest with its reason.
"""

from __future__ import annotations

import fnmatch
import re

__all__ = ["KEY", "SECRETS_FILE", "excluded_reason", "secret_name_reason"]

SECRETS_FILE = "secrets file"
KEY = "key"
_EXCLUDED_DIRS = {
    ".git": "version control internals",
    ".hg": "version control internals",
    ".svn": "version control internals",
    "node_modules": "dependency cache",
    ".venv": "virtual environment",
    "venv": "virtual environment",
    "__pycache__": "cache",
    ".mypy_cache": "cache",
    ".pytest_cache": "cache",
    ".ruff_cache": "cache",
    ".tox": "cache",
    ".cache": "cache",
    ".gradle": "cache",
    ".terraform": "dependency cache",
    "dist": "build output",
    "build": "build output",
    "target": "build output",
    "htmlcov": "coverage output",
    "coverage": "coverage output",
    "logs": "logs",
    "temp": "temporary and delivery files",
    ".idea": "editor state",
    ".vscode": "editor state",
    # Folders of credentials and keys, wherever they sit (a home directory copied into a repo, say).
    ".gnupg": "key store",
    ".ssh": "key store",
    ".password-store": "key store",
    ".aws": "cloud credentials",
    ".azure": "cloud credentials",
    "gcloud": "cloud credentials",
    ".kube": "cloud credentials",
    ".docker": "cloud credentials",
    ".secrets": SECRETS_FILE,
}
_PROFILE_DIR = re.compile(r"(?i)(chrome|chromium|firefox|browser|playwright)[-_]?(profile|user[-_]data)|^\.mozilla$")
_SECRET_NAMES = (
    ".env",
    ".env.*",
    "*.env",
    ".envrc",
    ".flaskenv",
    ".netrc",
    "_netrc",
    ".npmrc",
    ".pypirc",
    ".pgpass",
    ".htpasswd",
    ".my.cnf",
    ".git-credentials",
    ".s3cfg",
    ".boto",
    ".vault-token",
    ".dockercfg",
    "kubeconfig",
    "credentials*",
    "*.kdbx",
    "*.keychain",
    "*.keychain-db",
    "*.tfstate",
    "*.tfstate.*",
    "*.tfvars",
    "*service[-_]account*.json",
    "client_secret*.json",
    "*-adminsdk-*.json",
    "secrets.json",
    "secrets.yml",
    "secrets.yaml",
)
_KEY_NAMES = (
    "*.pem",
    "*.key",
    "*.p8",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.jceks",
    "*.keystore",
    "*.ppk",
    "*.gpg",
    "*.pgp",
    "*.ovpn",
    "secring.*",
    "id_rsa*",
    "id_dsa*",
    "id_ed25519*",
    "id_ecdsa*",
)
_SECRET_FILES = ((_SECRET_NAMES, SECRETS_FILE), (_KEY_NAMES, KEY))
_OTHER_FILES = (
    (("*.log",), "logs"),
    (("*.db", "*.sqlite", "*.sqlite3", "*.dump", "*.sql.gz"), "database or dump"),
    (("*.crt", "*.cer", "*.der"), "certificate"),
    (("*.zip", "*.tar", "*.gz", "*.tgz", "*.bz2", "*.xz", "*.7z", "*.rar", "*.zst", "*.whl", "*.jar"), "archive"),
    (("*.exe", "*.dll", "*.so", "*.dylib", "*.bin", "*.o", "*.a", "*.class", "*.pyc", "*.wasm"), "binary"),
)


def secret_name_reason(name: str) -> str | None:
    """``secrets file`` or ``key`` when a file's name says it holds credentials, else None."""
    lowered = name.lower()
    for patterns, reason in _SECRET_FILES:
        if any(fnmatch.fnmatchcase(lowered, pattern) for pattern in patterns):
            return reason
    return None


def excluded_reason(parts: tuple[str, ...]) -> str | None:
    """Why a repository-relative path is never packaged (a default exclusion), or None."""
    for part in parts[:-1]:
        if part in _EXCLUDED_DIRS:
            return _EXCLUDED_DIRS[part]
        if _PROFILE_DIR.search(part):
            return "browser profile"
    if (reason := secret_name_reason(parts[-1])) is not None:
        return reason
    name = parts[-1].lower()
    for patterns, reason in _OTHER_FILES:
        if any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns):
            return reason
    return None

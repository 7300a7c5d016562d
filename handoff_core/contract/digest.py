"""SHA-256 of bytes, from the interpreter's built-in module: the validator and the hook processes
start for every check and every tool call, and ``hashlib`` would load OpenSSL first (~3 ms)."""

from __future__ import annotations

__all__ = ["sha256_hex"]


def sha256_hex(data: bytes) -> str:
    """The same digest as ``hashlib.sha256(data).hexdigest()``."""
    try:  # named _sha256 up to Python 3.11, _sha2 from 3.12; another build: hashlib has it
        from _sha256 import sha256  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        try:
            from _sha2 import sha256  # type: ignore[import-not-found, no-redef, unused-ignore]
        except ImportError:
            from hashlib import sha256
    return str(sha256(data).hexdigest())

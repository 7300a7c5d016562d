"""SHA-256 and SHA-512 of bytes, from the interpreter's built-in modules: the validator and the hook
processes start for every check and every tool call, and ``hashlib`` would load OpenSSL first (~3 ms)."""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: the hook and the validator never load it
if TYPE_CHECKING:
    from typing import Any

__all__ = ["sha256_hex", "sha512_digest"]


def sha256_hex(data: bytes) -> str:
    """The same digest as ``hashlib.sha256(data).hexdigest()``."""
    return str(_built_in("sha256")(data).hexdigest())


def sha512_digest(data: bytes) -> bytes:
    """The same digest as ``hashlib.sha512(data).digest()`` (Ed25519's hash)."""
    return bytes(_built_in("sha512")(data).digest())


def _built_in(name: str) -> Any:
    """hashlib's constructor ``name`` from the interpreter's own module: ``_sha256``/``_sha512`` up to
    Python 3.11, ``_sha2`` from 3.12; on another build, hashlib's."""
    for module in ("_" + name, "_sha2"):
        try:
            return getattr(__import__(module), name)
        except (ImportError, AttributeError):
            continue
    import hashlib

    return getattr(hashlib, name)

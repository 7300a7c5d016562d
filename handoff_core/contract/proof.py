"""The REPORT proven: an Ed25519 signature by a key pair seeded from the task's report token.

The TASK records the public key beside its token check, so anyone holding the tree verifies a
REPORT from the files alone, with no secret. The signature covers the REPORT's bytes with its own
header line taken out. What it proves: whoever published the REPORT held the task's token (the
executor's server, or the Lead capturing a reply) and nothing was edited since. What it cannot:
a REPORT written by hand has no signature at all (``absent``), which stays seed-valid.

``cryptography`` is imported when a key is made or a REPORT signed. A process's first signature
checks are made in plain Python (``contract.ed25519``, answering as cryptography does,
property-tested), so ``handoff-validate`` never loads it; a process that checks more (a server
judging a tree) loads cryptography's compiled core then, each check there ~0.1 ms against ~1.3 ms.
"""

from __future__ import annotations

import re
import sys

from handoff_core.layout import literals_on_use

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: handoff-validate never loads it
if TYPE_CHECKING:
    from typing import Literal

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

__all__ = [
    "PLAIN_CHECKS",
    "PROOFS",
    "PROOF_INVALID",
    "SIGNATURE_FIELD",
    "SIGNING_KEY_LABEL",
    "Proof",
    "b64decoded",
    "ed25519_verifies",
    "proof_by",
    "proof_of",
    "sign_report",
    "signing_key",
    "verified_by_core",
]

# task_changed: only a verifier holding the Lead's secret says it (contract.anchor): the TASK is not the one published.
PROOFS: tuple[Proof, ...] = ("valid", "invalid", "absent", "task_changed")  # the home of the vocabulary
if TYPE_CHECKING:
    Proof = Literal["valid", "invalid", "absent", "task_changed"]  # a test holds it equal to PROOFS
else:
    __getattr__ = literals_on_use(__name__, {"Proof": PROOFS}, globals())


SIGNATURE_FIELD = "Signature: "
SIGNING_KEY_LABEL = "- Report signing key: "
PROOF_INVALID = (
    "REPORT signature does not verify against the TASK's signing key: edited after publishing, or signed by another key"
)
_SCHEME = "ed25519:"
_KEY_RE = re.compile(rb"^- Report signing key: `ed25519:([A-Za-z0-9+/]{43}=)`\r?$", re.MULTILINE)
_SIGNATURE_RE = re.compile(r"^Signature: ed25519:([A-Za-z0-9+/]{86}==)\Z")
_SEED_INFO = b"handoff-mcp report signing key v1"


def _private_key(token: str) -> Ed25519PrivateKey:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    seed = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_SEED_INFO).derive(token.strip().encode())
    return Ed25519PrivateKey.from_private_bytes(seed)


def signing_key(token: str) -> str:
    """The public key a TASK records for its report token: ``ed25519:`` and 32 bytes in base64."""
    import base64

    # The raw bytes without the serialization module: importing it costs a cold answer ~20 ms.
    raw = _private_key(token).public_key().public_bytes_raw()
    return _SCHEME + base64.b64encode(raw).decode()


def _header_end(lines: list[bytes]) -> int:
    return next((i for i, line in enumerate(lines) if line.startswith(b"## ")), len(lines))


def sign_report(text: str, token: str) -> str:
    """``text`` with a signature line as its last header line; taking that line out gives ``text`` back."""
    import base64

    lines = text.encode().split(b"\n")
    end = _header_end(lines)
    at = end - 1 if end > 0 and lines[end - 1] == b"" else end
    signature = base64.b64encode(_private_key(token).sign(text.encode())).decode()
    lines.insert(at, f"{SIGNATURE_FIELD}{_SCHEME}{signature}".encode())
    return b"\n".join(lines).decode()


def _signature(report: bytes) -> tuple[bytes, str | None]:
    """The bytes signed and the signature, or the bytes and None when the header has no signature line."""
    lines = report.split(b"\n")
    for index in range(_header_end(lines)):
        if lines[index].startswith(SIGNATURE_FIELD.encode()):
            match = _SIGNATURE_RE.match(lines[index].decode("utf-8", "replace").removesuffix("\r"))
            return b"\n".join(lines[:index] + lines[index + 1 :]), match.group(1) if match else ""
    return report, None


def proof_of(task: bytes, report: bytes) -> Proof:
    """Whether ``report`` is signed by the key ``task`` records: valid, invalid, or absent (no signature)."""
    keys = _KEY_RE.findall(task)
    # The server writes exactly one key line; two cannot be told apart.
    return _verified(keys[0].decode() if len(keys) == 1 else None, report)


def proof_by(public_key: str, report: bytes) -> Proof:
    """Whether ``report`` is signed by ``public_key`` (``ed25519:`` and base64), whatever its TASK says."""
    return _verified(public_key.removeprefix(_SCHEME), report)


def _verified(key: str | None, report: bytes) -> Proof:
    message, signature = _signature(report)
    if signature is None:
        return "absent"
    if not signature or key is None:
        return "invalid"
    try:
        return "valid" if ed25519_verifies(b64decoded(key), b64decoded(signature), message) else "invalid"
    except ValueError:  # binascii.Error is one
        return "invalid"


def b64decoded(text: str) -> bytes:
    """``base64.b64decode(text, validate=True)``, without loading base64 (and struct) for it; ValueError when
    it is not strict base64."""
    import binascii  # here: a check of an unsigned REPORT never loads it

    return binascii.a2b_base64(text.encode("ascii"), strict_mode=True)


# Loading cryptography's compiled core costs a process about as much as this many checks in plain
# Python (~4-5 ms against ~1.3 ms each): a one-shot check never loads it, a long walk soon does.
PLAIN_CHECKS = 4
_plain_checks_made = [0]  # a count shared by the process's threads; a lost increment only delays the switch


def ed25519_verifies(public: bytes, signature: bytes, message: bytes) -> bool:
    """Whether ``signature`` is ``public``'s over ``message``: in plain Python for the process's first
    ``PLAIN_CHECKS`` checks (unless cryptography's core is loaded already), then through the core.
    Both answer alike on every input (property-tested). Raises ValueError for a key that is not one."""
    if _plain_checks_made[0] < PLAIN_CHECKS and "cryptography.hazmat.bindings._rust" not in sys.modules:
        from handoff_core.contract.ed25519 import verifies

        _plain_checks_made[0] += 1
        return verifies(public, signature, message)
    return verified_by_core(public, signature, message)


def verified_by_core(public: bytes, signature: bytes, message: bytes) -> bool:
    """Whether ``signature`` is ``public``'s over ``message``, through cryptography's compiled core when
    it offers Ed25519 (what its public class calls; the Python layers around it cost ~10 ms to import),
    else through the public class: the same answer either way. Raises ValueError for a key that is not one."""
    try:
        from cryptography.hazmat.bindings._rust import openssl as rust_openssl

        from_public_bytes = rust_openssl.ed25519.from_public_bytes
    except (ImportError, AttributeError):  # a cryptography without that core: the public class
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

        from_public_bytes = Ed25519PublicKey.from_public_bytes
    verifier = from_public_bytes(public)
    try:
        verifier.verify(signature, message)
    except Exception as exc:  # the class to catch comes from the Python layers: imported only on failure
        from cryptography.exceptions import InvalidSignature

        if isinstance(exc, InvalidSignature):
            return False
        raise
    return True

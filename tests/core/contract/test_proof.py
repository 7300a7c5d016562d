"""The Ed25519 check a validator's process makes: through cryptography's compiled core, it answers as the
public key class does on every input (valid, tampered, non-canonical S, keys that are no point)."""

from __future__ import annotations

import base64
import binascii
import sys

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from hypothesis import given
from hypothesis import strategies as st

from handoff_core.contract.proof import b64decoded, ed25519_verifies

ORDER = 2**252 + 27742317777372353535851937790883648493  # the group order L: an S at or above it is not canonical
FIELD = 2**255 - 19  # p: a y at or above it is not a canonical point encoding


def by_public_class(public: bytes, signature: bytes, message: bytes) -> bool | str:
    try:
        Ed25519PublicKey.from_public_bytes(public).verify(signature, message)
    except InvalidSignature:
        return False
    except ValueError:
        return "ValueError"
    return True


def by_core(public: bytes, signature: bytes, message: bytes) -> bool | str:
    try:
        return ed25519_verifies(public, signature, message)
    except ValueError:
        return "ValueError"


def signed(seed: bytes, message: bytes) -> tuple[bytes, bytes]:
    key = Ed25519PrivateKey.from_private_bytes(seed)
    return key.public_key().public_bytes_raw(), key.sign(message)


def flipped(data: bytes, at: int, bit: int) -> bytes:
    index = at % len(data)
    return data[:index] + bytes([data[index] ^ (1 << bit)]) + data[index + 1 :]


SEEDS = st.binary(min_size=32, max_size=32)
MESSAGES = st.binary(max_size=300)


@given(SEEDS, MESSAGES)
def test_a_valid_signature_verifies_as_the_public_class_says(seed: bytes, message: bytes) -> None:
    public, signature = signed(seed, message)
    assert by_core(public, signature, message) is True
    assert by_public_class(public, signature, message) is True


@given(SEEDS, MESSAGES, st.integers(0, 10_000), st.integers(0, 7), st.sampled_from(["message", "signature", "key"]))
def test_a_tampered_message_signature_or_key_answers_as_the_public_class(
    seed: bytes, message: bytes, at: int, bit: int, what: str
) -> None:
    public, signature = signed(seed, message)
    if what == "message":
        message = flipped(message, at, bit) if message else b"x"
    elif what == "signature":
        signature = flipped(signature, at, bit)
    else:
        public = flipped(public, at, bit)
    assert by_core(public, signature, message) == by_public_class(public, signature, message)
    assert by_core(public, signature, message) is not True or what == "key"  # a changed byte never verifies


@given(SEEDS, MESSAGES, st.integers(1, 15))
def test_a_non_canonical_s_is_refused_as_the_public_class_refuses_it(seed: bytes, message: bytes, times: int) -> None:
    public, signature = signed(seed, message)
    s = int.from_bytes(signature[32:], "little") + times * ORDER  # the same scalar mod L, written too large
    if s >= 2**256:
        s = int.from_bytes(signature[32:], "little") + ORDER
    malleated = signature[:32] + s.to_bytes(32, "little")
    assert by_core(public, malleated, message) == by_public_class(public, malleated, message) == False  # noqa: E712


@given(st.binary(min_size=32, max_size=32), st.binary(min_size=64, max_size=64), MESSAGES)
def test_any_key_and_signature_bytes_answer_as_the_public_class(
    public: bytes, signature: bytes, message: bytes
) -> None:
    assert by_core(public, signature, message) == by_public_class(public, signature, message)


@given(st.integers(0, 18), st.booleans(), st.binary(min_size=64, max_size=64))
def test_a_key_written_past_the_field_answers_as_the_public_class(extra: int, sign: bool, signature: bytes) -> None:
    y = FIELD + extra  # not a canonical encoding of any point
    public = (y | (int(sign) << 255)).to_bytes(32, "little")
    assert by_core(public, signature, b"m") == by_public_class(public, signature, b"m")


@pytest.mark.parametrize("size", [0, 31, 33])
def test_a_key_of_the_wrong_length_is_a_value_error_either_way(size: int) -> None:
    assert by_core(b"\1" * size, b"\0" * 64, b"m") == by_public_class(b"\1" * size, b"\0" * 64, b"m") == "ValueError"


def test_without_the_compiled_core_the_public_class_answers_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    """An import of the core that fails (another cryptography) falls back; the verdict never changes."""
    public, signature = signed(b"\7" * 32, b"report")
    monkeypatch.setitem(sys.modules, "cryptography.hazmat.bindings._rust", None)  # importing it now fails
    with pytest.raises(ImportError):
        from cryptography.hazmat.bindings._rust import openssl  # noqa: F401
    assert ed25519_verifies(public, signature, b"report") is True
    assert ed25519_verifies(public, signature, b"tampered") is False


def _decoded_by_base64(text: str) -> bytes | str:
    try:
        return base64.b64decode(text, validate=True)
    except (ValueError, binascii.Error):
        return "ValueError"


def _decoded_here(text: str) -> bytes | str:
    try:
        return b64decoded(text)
    except ValueError:
        return "ValueError"


@given(st.one_of(st.binary(max_size=70).map(lambda b: base64.b64encode(b).decode()), st.text(max_size=70)), st.data())
def test_strict_base64_is_read_as_base64_reads_it(text: str, data: st.DataObject) -> None:
    """Well formed, cut, padded wrongly, with foreign or non-ASCII characters: the same bytes or the same refusal."""
    if text and data.draw(st.booleans()):
        at = data.draw(st.integers(0, len(text)))
        text = text[:at] + data.draw(st.sampled_from(["=", "==", "\n", " ", "-", "_", "é", "A"])) + text[at:]
    assert _decoded_here(text) == _decoded_by_base64(text)

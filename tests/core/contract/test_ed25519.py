"""The Ed25519 checks, in plain Python and through cryptography's compiled core, answer as cryptography's
public key class does on every input: valid, tampered, non-canonical S, R or key, keys that are no
point, small-order keys and points. A process makes its first checks in plain Python."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from collections.abc import Callable

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from hypothesis import given
from hypothesis import strategies as st

from handoff_core.contract import ed25519
from handoff_core.contract.ed25519 import verifies
from handoff_core.contract.proof import PLAIN_CHECKS, verified_by_core

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
    """Both checks of this package, which must agree with each other before either is compared."""
    answers: list[bool | str] = []
    for check in CHECKS:
        try:
            answers.append(check(public, signature, message))
        except ValueError:
            answers.append("ValueError")
    assert answers[0] == answers[1], answers
    return answers[0]


CHECKS: tuple[Callable[[bytes, bytes, bytes], bool], ...] = (verifies, verified_by_core)


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


def test_a_signature_of_the_wrong_length_is_false_and_a_key_of_the_wrong_length_a_value_error() -> None:
    public, signature = signed(b"\7" * 32, b"report")
    for cut in (signature[:63], signature + b"\0", b""):
        assert by_core(public, cut, b"report") is by_public_class(public, cut, b"report") is False


# The small-order points, found here with affine arithmetic of this test's own (no code under test):
# [L]Q of a point Q lies in the torsion subgroup of order 8.
D = -121665 * pow(121666, FIELD - 2, FIELD) % FIELD


def _affine_add(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    (x1, y1), (x2, y2) = a, b
    product = D * x1 * x2 * y1 * y2 % FIELD
    x = (x1 * y2 + y1 * x2) * pow(1 + product, FIELD - 2, FIELD) % FIELD
    y = (y1 * y2 + x1 * x2) * pow(1 - product, FIELD - 2, FIELD) % FIELD
    return x, y


def _times(n: int, point: tuple[int, int]) -> tuple[int, int]:
    result = (0, 1)
    while n:
        if n & 1:
            result = _affine_add(result, point)
        point, n = _affine_add(point, point), n >> 1
    return result


def _point_at(y: int) -> tuple[int, int] | None:
    ratio = (y * y - 1) * pow(D * y * y + 1, FIELD - 2, FIELD) % FIELD
    x = pow(ratio, (FIELD + 3) // 8, FIELD)
    if x * x % FIELD != ratio:
        x = x * pow(2, (FIELD - 1) // 4, FIELD) % FIELD
    return (x, y) if x * x % FIELD == ratio else None


def _torsion() -> set[tuple[int, int]]:
    found: set[tuple[int, int]] = set()
    for y in range(2, 40):
        point = _point_at(y)
        if point is not None:
            found.add(_times(ORDER, point))
    return {_times(n, point) for point in found for n in range(8)}


TORSION = sorted(_torsion())


def _encodings(x: int, y: int) -> list[bytes]:
    """Every way to write (x, y) or its mirror: both sign bits, and y past the field where it fits."""
    ys = [y, y + FIELD] if y + FIELD < 2**255 else [y]
    return [(value | sign << 255).to_bytes(32, "little") for value in ys for sign in (0, 1)]


SMALL_ORDER = sorted({encoding for x, y in TORSION for encoding in _encodings(x, y)})


def test_the_torsion_points_found_are_the_eight_of_the_curve() -> None:
    assert len(TORSION) == 8
    assert all(_times(8, point) == (0, 1) for point in TORSION)
    # five y values (1, -1, 0 and two of order 8; x and -x share one), two sign bits each, y = 0 and 1 past the field
    assert len(SMALL_ORDER) == 14


def _scalar(seed: bytes) -> int:
    """The secret scalar cryptography derives from a seed (RFC 8032 §5.1.5), reduced mod L."""
    head = bytearray(hashlib.sha512(seed).digest()[:32])
    head[0] &= 248
    head[31] = (head[31] & 127) | 64
    return int.from_bytes(head, "little") % ORDER


@given(st.sampled_from(SMALL_ORDER), SEEDS, MESSAGES)
def test_a_small_order_key_answers_as_the_public_class(public: bytes, seed: bytes, message: bytes) -> None:
    """R = [S]B makes [S]B - [k]A = R exactly when [k]A is the identity: as OpenSSL, no key is refused for its order."""
    r = Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes_raw()  # [a]B
    signature = r + _scalar(seed).to_bytes(32, "little")
    assert by_core(public, signature, message) == by_public_class(public, signature, message)


@given(
    st.sampled_from([encoding for encoding in SMALL_ORDER if int.from_bytes(encoding, "little") & (2**255 - 1) == 1])
)
def test_the_identity_as_key_accepts_any_message_for_a_canonical_r_only(public: bytes) -> None:
    """S = 0 and A the identity (however written): [0]B - [k]A is the identity, whose only encoding OpenSSL
    accepts as R is the canonical one."""
    identity = (1).to_bytes(32, "little")
    for r, expected in (
        (identity, True),
        ((1 + FIELD).to_bytes(32, "little"), False),
        (b"\1" + b"\0" * 30 + b"\x80", False),
    ):
        signature = r + bytes(32)
        assert by_core(public, signature, b"any") is by_public_class(public, signature, b"any") is expected


def test_an_s_equal_to_the_order_is_refused_where_s_zero_verifies() -> None:
    """The identity as key and as R: [S]B - [k]A is the identity for S = 0 and, as a point, for S = L or
    2L too, which OpenSSL refuses for S alone: the bound is S < L, not S <= L."""
    identity = (1).to_bytes(32, "little")
    for s, expected in ((0, True), (ORDER, False), (2 * ORDER, False)):
        signature = identity + s.to_bytes(32, "little")
        assert by_core(identity, signature, b"any") is by_public_class(identity, signature, b"any") is expected


@given(SEEDS, MESSAGES, st.sampled_from(SMALL_ORDER), st.integers(0, ORDER - 1))
def test_a_small_order_or_non_canonical_r_answers_as_the_public_class(
    seed: bytes, message: bytes, r: bytes, s: int
) -> None:
    public, _ = signed(seed, message)
    signature = r + s.to_bytes(32, "little")
    assert by_core(public, signature, message) == by_public_class(public, signature, message)


def test_the_curve_constants_written_out_are_the_ones_their_definitions_give() -> None:
    assert ed25519.D == D
    assert pow(2, (FIELD - 1) // 4, FIELD) == ed25519.SQRT_M1
    x, y = ed25519._BX, ed25519._BY  # the base point: y = 4/5, x its even root
    assert y == 4 * pow(5, FIELD - 2, FIELD) % FIELD
    assert (x, y) == _point_at(y) or (FIELD - x, y) == _point_at(y)
    assert x % 2 == 0
    assert _times(ORDER, (x, y)) == (0, 1)


def test_without_the_compiled_core_the_public_class_answers_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    """An import of the core that fails (another cryptography) falls back; the verdict never changes."""
    public, signature = signed(b"\7" * 32, b"report")
    monkeypatch.setitem(sys.modules, "cryptography.hazmat.bindings._rust", None)  # importing it now fails
    with pytest.raises(ImportError):
        from cryptography.hazmat.bindings._rust import openssl  # noqa: F401
    assert verified_by_core(public, signature, b"report") is True
    assert verified_by_core(public, signature, b"tampered") is False


CHECKS_IN_A_PROCESS = """
import sys
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
key = Ed25519PrivateKey.from_private_bytes(bytes(32))
public, signature = key.public_key().public_bytes_raw(), key.sign(b"report")
for name in [name for name in sys.modules if name.startswith("cryptography")]:
    del sys.modules[name]  # as a process that never signed
from handoff_core.contract.proof import ed25519_verifies
loaded = []
for _ in range(int(sys.argv[1])):
    assert ed25519_verifies(public, signature, b"report") and not ed25519_verifies(public, signature, b"x")
    loaded.append("cryptography.hazmat.bindings._rust" in sys.modules)
print(loaded)
"""


@pytest.mark.slow  # starts a process
def test_a_process_checks_in_plain_python_first_then_through_the_compiled_core() -> None:
    """A one-shot check never loads cryptography; a process that checks many loads its core once and
    checks there from then on."""
    result = subprocess.run(
        [sys.executable, "-c", CHECKS_IN_A_PROCESS, str(PLAIN_CHECKS)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    # each round checks twice: the plain checks end halfway, the core is loaded from then on
    half = PLAIN_CHECKS // 2
    assert result.stdout.strip() == str([False] * half + [True] * (PLAIN_CHECKS - half)), result.stderr

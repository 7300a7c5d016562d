"""Ed25519 verification (RFC 8032 §5.1.7) in plain Python, answering exactly as OpenSSL does.

A signed REPORT is checked by every ``handoff-validate``: loading cryptography's compiled core (a
14 MB library with OpenSSL inside) cost each check more than this whole verification. Signing stays
with cryptography (``contract.proof``), and the tests hold this against it differentially.

OpenSSL's rules, kept here: S must be below L (else invalid); the public key A is decoded leniently,
its y taken modulo p even when it is not canonical, x = 0 allowed with either sign bit, a y with no
x on the curve invalid; R is not decoded: [S]B - [k]A is encoded and compared with R's bytes, so a
non-canonical R never verifies; small-order keys and points are not refused; the equation is the
cofactorless one. Verifying handles no secret, so nothing here needs to run in constant time.
"""

from __future__ import annotations

from handoff_core.contract.digest import sha512_digest

__all__ = ["verifies"]

P = 2**255 - 19
L = 2**252 + 27742317777372353535851937790883648493
# The curve's constants written out (computing them costs each check three modular powers); a test
# derives each from its definition: d = -121665/121666, sqrt(-1) = 2^((p-1)/4), B's y = 4/5.
D = 37095705934669439343138083508754565189542113879843219016388785533085940283555
SQRT_M1 = 19681161376707505956807079304988542015446066515923890162744021073123829784752
_D2 = 2 * D % P
_BY = 46316835694926478169428394003475163141307993866256225615783033603165251855960
_BX = 15112221349535400772501151409588531511454012693041857206046113283949847762202
_BASE = (_BX, _BY, 1, _BX * _BY % P)  # extended coordinates (X, Y, Z, T), x = X/Z, y = Y/Z, xy = T/Z


Point = tuple[int, int, int, int]
KEY_BYTES = 32
SIGNATURE_BYTES = 64
_WINDOW = 16  # width-4 NAF: digits are taken modulo 16, as -7..7


def _add(a: Point, b: Point) -> Point:
    """a + b (add-2008-hwcd-3 for a = -1)."""
    x1, y1, z1, t1 = a
    x2, y2, z2, t2 = b
    aa = (y1 - x1) * (y2 - x2) % P
    bb = (y1 + x1) * (y2 + x2) % P
    cc = t1 * _D2 % P * t2 % P
    dd = 2 * z1 * z2 % P
    e, f, g, h = bb - aa, dd - cc, dd + cc, bb + aa
    return e * f % P, g * h % P, f * g % P, e * h % P


def _double(a: Point) -> Point:
    """2a (dbl-2008-hwcd for a = -1)."""
    x1, y1, z1, _ = a
    aa = x1 * x1 % P
    bb = y1 * y1 % P
    cc = 2 * z1 * z1 % P
    h = aa + bb
    e = h - (x1 + y1) * (x1 + y1) % P
    g = aa - bb
    f = cc + g
    return e * f % P, g * h % P, f * g % P, e * h % P


def _decoded(raw: bytes) -> Point | None:
    """The point ``raw`` names as OpenSSL decodes a public key, or None when its y has no x on the curve."""
    number = int.from_bytes(raw, "little")
    y = (number & ((1 << 255) - 1)) % P  # a non-canonical y (p..2^255-1) counts modulo p
    u = (y * y - 1) % P
    v = (D * y * y + 1) % P
    x = u * pow(u * v, (P - 5) // 8, P) % P  # a square root of u/v, up to a factor sqrt(-1)
    vxx = v * x * x % P
    if vxx != u:
        if (vxx + u) % P:
            return None
        x = x * SQRT_M1 % P
    if (x & 1) != number >> 255:
        x = (P - x) % P
    return x, y, 1, x * y % P


def _encoded(x: int, y: int, z: int) -> bytes:
    inverse = pow(z, P - 2, P)
    x, y = x * inverse % P, y * inverse % P
    return (y | (x & 1) << 255).to_bytes(KEY_BYTES, "little")


def _naf(n: int) -> list[int]:
    """``n`` in width-4 non-adjacent form, lowest digit first: each digit 0 or odd in -7..7."""
    digits = []
    while n:
        digit = 0
        if n & 1:
            digit = n % _WINDOW
            digit -= _WINDOW if digit > _WINDOW // 2 else 0
            n -= digit
        digits.append(digit)
        n >>= 1
    return digits


def _odd_multiples(point: Point) -> list[Point]:
    """point, 3 point, 5 point, 7 point."""
    twice = _double(point)
    table = [point]
    for _ in range(3):
        table.append(_add(table[-1], twice))
    return table


def _negated(point: Point) -> Point:
    x, y, z, t = point
    return (P - x) % P, y, z, (P - t) % P


def _walk(scalar: int, point: Point, length: int) -> tuple[list[int], list[Point], list[Point]]:
    """The scalar's NAF digits padded to ``length``, and the odd multiples of the point and of its negative."""
    digits = _naf(scalar)
    table = _odd_multiples(point)
    return digits + [0] * (length - len(digits)), table, [_negated(multiple) for multiple in table]


def _combined(s: int, k: int, minus_a: Point) -> tuple[int, int, int]:
    """[s]B + [k](-A) as (X, Y, Z): both scalars in width-4 NAF, walked together from the top digit."""
    length = max(s.bit_length(), k.bit_length()) + 1
    walks = (_walk(s, _BASE, length), _walk(k, minus_a, length))
    x, y, z = 0, 1, 1
    for index in range(length - 1, -1, -1):
        aa, bb = x * x % P, y * y % P  # doubling (dbl-2008-hwcd); its T only when an addition follows
        h, g = aa + bb, aa - bb
        e = h - (x + y) * (x + y) % P
        f = 2 * z * z % P + g
        x, y, z = e * f % P, g * h % P, f * g % P
        if walks[0][0][index] or walks[1][0][index]:
            t = e * h % P
            for digits, table, negative in walks:
                digit = digits[index]
                if digit:
                    added = table[digit >> 1] if digit > 0 else negative[-digit >> 1]
                    x, y, z, t = _add((x, y, z, t), added)
    return x, y, z


def verifies(public: bytes, signature: bytes, message: bytes) -> bool:
    """Whether ``signature`` (64 bytes) is ``public``'s (32 bytes) over ``message``, as OpenSSL judges it.
    Raises ValueError for a key that is not 32 bytes long; a signature not 64 bytes long is False."""
    if len(public) != KEY_BYTES:
        raise ValueError("an Ed25519 public key has 32 bytes")
    if len(signature) != SIGNATURE_BYTES:
        return False
    s = int.from_bytes(signature[KEY_BYTES:], "little")
    if s >= L:
        return False
    point = _decoded(public)
    if point is None:
        return False
    k = int.from_bytes(sha512_digest(signature[:KEY_BYTES] + public + message), "little") % L
    return _encoded(*_combined(s, k, _negated(point))) == signature[:KEY_BYTES]

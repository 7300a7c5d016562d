import hashlib
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from handoff_core.contract.digest import sha256_hex, sha512_digest


@given(st.binary(max_size=4096))
def test_the_digests_are_the_ones_hashlib_gives(data: bytes) -> None:
    assert sha256_hex(data) == hashlib.sha256(data).hexdigest()
    assert sha512_digest(data) == hashlib.sha512(data).digest()


@pytest.mark.slow
def test_neither_digest_loads_openssl() -> None:
    code = (
        "import sys\nfrom handoff_core.contract.digest import sha256_hex, sha512_digest\n"
        "sha256_hex(b'a'); sha512_digest(b'a')\nprint('_hashlib' in sys.modules, 'hashlib' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.split() == ["False", "False"]

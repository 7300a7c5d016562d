"""Git's ``-z`` output as the evidence parses it."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from handoff_core.errors import GitError
from handoff_core.files.git_process import Change, fields, name_status, start

_PATH = st.binary(min_size=1, max_size=12).filter(lambda b: b"\0" not in b)
_RECORD = st.one_of(
    st.tuples(st.sampled_from([b"A", b"D", b"M", b"T", b"U", b"X"]), _PATH),
    st.tuples(st.sampled_from([b"R100", b"C075", b"R050"]), _PATH, _PATH),
)


def one_by_one(out: bytes) -> list[Change]:
    """Each field decoded alone, each record read in turn: what ``name_status`` answers at once."""
    parts = [part.decode("utf-8", "surrogateescape") for part in out.split(b"\0")[:-1]]
    found, index = [], 0
    while index + 1 < len(parts):
        status = parts[index][:1]
        if status in ("R", "C") and index + 2 < len(parts):
            found.append(Change(status, parts[index + 2], parts[index + 1]))
            index += 3
        else:
            found.append(Change(status, parts[index + 1]))
            index += 2
    return found


@given(st.lists(_RECORD, max_size=20), st.binary(max_size=6))
def test_name_status_read_at_once_answers_as_each_record_read_in_turn(
    records: list[tuple[bytes, ...]], tail: bytes
) -> None:
    out = b"".join(part + b"\0" for record in records for part in record)
    for said in (out, out + tail, tail + out):
        assert name_status(said) == one_by_one(said)
        assert all(type(change) is Change for change in name_status(said))  # named, not bare tuples
        assert fields(said) == [part.decode("utf-8", "surrogateescape") for part in said.split(b"\0")[:-1]]


def test_a_git_process_read_twice_answers_or_fails_as_it_did_the_first_time(tmp_path: Path) -> None:
    ok = start(tmp_path, "--version")
    first = ok.result()
    assert first[0] == 0
    assert first[1].startswith(b"git version")
    assert ok.result() == first
    failed = start(tmp_path, "rev-parse", "HEAD")  # no repository here
    with pytest.raises(GitError) as once:
        failed.result()
    with pytest.raises(GitError) as again:
        failed.result()
    assert again.value is once.value

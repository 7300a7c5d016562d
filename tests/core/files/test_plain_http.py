"""An http:// team server's answer is read bounded and parsed strictly: anything but a sized, well-formed
answer is a refusal (``team_server_error``), never a hang or a partial body taken as whole."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from handoff_core.errors import TeamServerError
from handoff_core.files.plain_http import HEAD_LIMIT, PlainHttpRefused, post, split_url
from tests.support.canned_http import Canned, canned_server, read_task_answer

pytestmark = pytest.mark.slow  # the team server runs as its own process


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Canned]:
    with canned_server(tmp_path) as canned:
        yield canned


def _post(server: Canned, timeout: float = 5.0, limit: int = 1 << 20) -> bytes:
    return post(server.url, b'{"x": 1}', {"Content-Type": "application/json"}, timeout, limit).body


def test_a_well_formed_answer_is_read_to_its_content_length(server: Canned) -> None:
    server.answers(read_task_answer("TASK") + b"trailing bytes past the length are not read")
    answer = post(server.url, b"{}", {}, 5.0, 1 << 20)
    assert (answer.status, answer.content_type) == (200, "application/json")
    assert answer.body.endswith(b'"text": "TASK"}}}')
    assert server.requests == 1


@pytest.mark.parametrize(
    "answer",
    [
        b"SSH-2.0-OpenSSH_9.6\r\n\r\n",  # not HTTP at all
        b"HTTP/1.1 2OO OK\r\nContent-Length: 2\r\n\r\n{}",  # a status that is not three digits
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nno colon here\r\n\r\n{}",  # a malformed header
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}",  # a repeated length
        b"HTTP/1.1 200 OK\r\nContent-Length: -2\r\n\r\n{}",  # a length that is not digits
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{}",  # no length: unsized
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{}",  # cut short before its length
        b"HTTP/1.1 200 OK\r\nContent-Length: 2",  # closed before the headers end
    ],
)
def test_a_garbled_or_unsized_answer_is_refused(server: Canned, answer: bytes) -> None:
    server.answers(answer)
    with pytest.raises(TeamServerError) as refused:
        _post(server)
    assert refused.value.code == "team_server_error"


def test_an_answer_over_the_limit_is_refused_without_reading_its_body(server: Canned) -> None:
    server.answers(b"HTTP/1.1 200 OK\r\nContent-Length: 999999999\r\n\r\n" + b"x" * 1000)
    with pytest.raises(TeamServerError) as refused:
        _post(server, limit=1000)
    assert refused.value.code == "team_server_error"


def test_headers_that_never_end_are_refused_at_the_head_limit(server: Canned) -> None:
    server.answers(b"HTTP/1.1 200 OK\r\n" + b"X-Pad: " + b"a" * (HEAD_LIMIT * 4))
    with pytest.raises(TeamServerError) as refused:
        _post(server)
    assert refused.value.code == "team_server_error"


def test_a_server_that_never_answers_is_refused_within_the_time_bound(server: Canned) -> None:
    server.answers(b"")  # the request is read, and nothing comes back
    start = time.monotonic()
    with pytest.raises(TeamServerError) as refused:
        _post(server, timeout=0.5)
    assert refused.value.code == "team_server_error"
    assert time.monotonic() - start < 5


def test_nothing_listening_is_refused(tmp_path: Path) -> None:
    with canned_server(tmp_path) as canned:
        url = canned.url
    with pytest.raises(TeamServerError) as refused:
        post(url, b"{}", {}, 2.0, 1000)
    assert refused.value.code == "team_server_error"


def test_urls_are_split_strictly_and_https_is_left_to_the_tls_client() -> None:
    assert split_url("http://127.0.0.1:8080/executor/mcp") == ("127.0.0.1", 8080, "/executor/mcp")
    assert split_url("http://[::1]:9/x") == ("::1", 9, "/x")
    assert split_url("http://team") == ("team", 80, "")
    with pytest.raises(PlainHttpRefused):
        split_url("https://team.example/executor/mcp")
    for bad in (
        "ftp://x/",
        "http://user:pw@team/",
        "http://team:99999/",
        "http://team/a b",
        "http:///x",
        "http://[::1/",
    ):
        with pytest.raises(TeamServerError):
            split_url(bad)


def test_a_header_value_with_a_line_break_is_refused_before_anything_is_sent(server: Canned) -> None:
    server.answers(read_task_answer("TASK"))
    with pytest.raises(TeamServerError) as refused:
        post(server.url, b"{}", {"Authorization": "Bearer t\r\nX-Injected: 1"}, 5.0, 1000)
    assert refused.value.code == "team_server_error"
    assert server.requests == 0


_HEADS = st.sampled_from(
    [b"HTTP/1.1 200 OK", b"HTTP/1.0 404 Nope", b"HTTP/1.1 2OO OK", b"HTTP/2 200", b"", b"\xff\xfe"]
)
_FIELDS = st.lists(
    st.sampled_from(
        [b"Content-Length: 2", b"Content-Length: 5", b"content-length:0", b"Content-Length: 1e3", b"X: y",
         b"Transfer-Encoding: chunked", b": empty", b"Content-Type: application/json", b"\xc3\xa9: x"]
    ),
    max_size=4,
)  # fmt: skip
_ANSWERS = st.one_of(
    st.binary(min_size=1, max_size=200),
    st.builds(
        lambda head, fields, body: b"\r\n".join([head, *fields]) + b"\r\n\r\n" + body,
        _HEADS,
        _FIELDS,
        st.binary(max_size=8),
    ),
)


@settings(max_examples=60, deadline=None)
@given(answer=_ANSWERS)
def test_any_answer_is_read_to_its_declared_length_or_refused(
    tmp_path_factory: pytest.TempPathFactory, answer: bytes
) -> None:
    refused: TeamServerError | None = None
    with canned_server(tmp_path_factory.mktemp("canned")) as canned:
        canned.answers(answer)
        try:
            got = post(canned.url, b"{}", {}, 2.0, 1000)
        except TeamServerError as exc:  # the only way it fails: a refusal
            refused = exc
    if refused is not None:
        assert refused.code == "team_server_error"
        return
    head, _, rest = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    assert lines[0].startswith(("HTTP/1.1 ", "HTTP/1.0 "))
    (declared,) = (line.partition(":")[2].strip() for line in lines[1:] if line.lower().startswith("content-length:"))
    assert got.body == rest[: int(declared)]
    assert len(got.body) == int(declared)

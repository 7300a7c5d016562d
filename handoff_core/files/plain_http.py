"""One HTTP/1.1 POST over a plain socket, for a hook process asking a team server at an ``http://`` URL.

``http.client`` loads ``email``, ``urllib`` and more (~10 ms), and a hook pays for every import on
every tool call; a loopback team server needs none of it. The answer is untrusted: every read is
bounded in bytes and in time, the status line and the headers are parsed strictly, and the body is
exactly ``Content-Length`` bytes (no chunked encoding, no reading to the end of the stream). Any
other answer is a ``TeamServerError`` saying what was wrong, which a hook turns into a deny.
``https://`` is not handled here (``PlainHttpRefused``): the caller uses ``http.client`` and ``ssl``.
Stdlib only (``_socket``); no ``re``, ``urllib`` or ``email``.
"""

from __future__ import annotations

import _socket  # ``socket`` would load ``enum`` and more (a few ms): the hook needs a connect, a send, a recv
import time

from handoff_core.errors import TeamServerError

__all__ = ["HEAD_LIMIT", "Answer", "PlainHttpRefused", "post", "split_url"]

HEAD_LIMIT = 16 * 1024  # the status line and headers of an answer: a JSON API's are a few hundred bytes
_HEADERS_MAX = 100
_PORTS = range(1, 65536)
_URL_CHARS = range(33, 127)  # printable ASCII, no space
_SIZE_DIGITS = 12  # a Content-Length of more digits is over any limit anyway
_CODE_DIGITS = 3


class PlainHttpRefused(Exception):
    """The URL is not one this module asks (``https``): the caller takes the full client."""


class Answer:
    """A parsed answer: its status, its content type (lowercase, parameters kept) and its body."""

    __slots__ = ("body", "content_type", "status")

    def __init__(self, status: int, content_type: str, body: bytes) -> None:
        self.status, self.content_type, self.body = status, content_type, body


def split_url(url: str) -> tuple[str, int, str]:
    """(host, port, path) of an ``http://host[:port]/path`` URL; ``PlainHttpRefused`` for ``https``;
    ``TeamServerError`` for anything else (credentials, a query with spaces, a missing host)."""
    if url.startswith("https://"):
        raise PlainHttpRefused(url)
    if not url.startswith("http://"):
        raise TeamServerError(f"{url[:200]!r} is not an http(s) URL of the team server's executor endpoint")
    rest = url[len("http://") :]
    authority, slash, path = rest.partition("/")
    host, port = authority, 80
    if authority.startswith("["):  # an IPv6 literal
        close = authority.find("]")
        host, tail = authority[1:close], authority[close + 1 :]
        if close < 0 or (tail and not tail.startswith(":")):
            raise TeamServerError(f"{url[:200]!r} has a malformed host")
        port_text = tail[1:] if tail else ""
    else:
        host, _, port_text = authority.partition(":")
    if port_text:
        if not port_text.isdigit() or int(port_text) not in _PORTS:
            raise TeamServerError(f"{url[:200]!r} has a malformed port")
        port = int(port_text)
    if not host or "@" in authority or not all(ord(c) in _URL_CHARS for c in url):
        raise TeamServerError(f"{url[:200]!r} is not a plain http URL (a host, no credentials, no spaces)")
    return host, port, slash + path


def post(url: str, body: bytes, headers: dict[str, str], timeout: float, limit: int) -> Answer:
    """POST ``body`` to ``url`` and read the answer, its body at most ``limit`` bytes, all within ``timeout``."""
    host, port, path = split_url(url)
    deadline = time.monotonic() + timeout
    named = f"[{host}]" if ":" in host else host
    lines = [f"POST {path or '/'} HTTP/1.1", f"Host: {named}:{port}", "Connection: close"]
    lines += [f"Content-Length: {len(body)}", *(f"{name}: {value}" for name, value in headers.items())]
    if any("\r" in line or "\n" in line for line in lines):  # a token from the environment adds no header
        raise TeamServerError("a request header holds a line break: check the token variable")
    try:
        request = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body
    except UnicodeEncodeError as exc:
        raise TeamServerError("a request header is not latin-1 text: check the token variable") from exc
    sock = None
    try:
        sock = _connect(host, port, timeout)
        sock.sendall(request)
        return _answer(_Reader(sock, deadline, timeout), limit)
    except TimeoutError as exc:
        raise TeamServerError(f"the team server did not answer within {timeout:g} s") from exc
    except OSError as exc:
        raise TeamServerError(f"cannot reach the team server at {url[:200]}: {exc}") from exc
    finally:
        if sock is not None:
            sock.close()


def _connect(host: str, port: int, timeout: float) -> _socket.socket:
    """A connected TCP socket to the first address of ``host`` that answers, as ``socket.create_connection``."""
    failed: OSError = OSError(f"no address for {host}")  # the host as bytes: a str would load the idna codec
    for family, kind, proto, _, address in _socket.getaddrinfo(host.encode("ascii"), port, 0, _socket.SOCK_STREAM):
        sock = _socket.socket(family, kind, proto)
        try:
            sock.settimeout(timeout)
            sock.connect(address)
            return sock
        except OSError as exc:
            sock.close()
            failed = exc
    raise failed


class _Reader:
    """Reads from a socket, each read bounded by what is wanted and by the time left."""

    def __init__(self, sock: _socket.socket, deadline: float, timeout: float) -> None:
        self.sock, self.deadline, self.timeout, self.held = sock, deadline, timeout, b""

    def more(self, most: int) -> bytes:
        if (left := self.deadline - time.monotonic()) <= 0:
            raise TeamServerError(f"the team server did not answer within {self.timeout:g} s")
        self.sock.settimeout(left)
        return self.sock.recv(min(most, 1 << 16))

    def head(self) -> bytes:
        """The bytes up to the blank line ending the headers, at most ``HEAD_LIMIT``."""
        while (end := self.held.find(b"\r\n\r\n")) < 0:
            if len(self.held) > HEAD_LIMIT:
                raise TeamServerError(f"the team server's answer has no end of headers within {HEAD_LIMIT} bytes")
            chunk = self.more(HEAD_LIMIT + 4 - len(self.held))
            if not chunk:
                raise TeamServerError("the team server closed the connection before its headers ended")
            self.held += chunk
        head, self.held = self.held[:end], self.held[end + 4 :]
        return head

    def exactly(self, size: int) -> bytes:
        while len(self.held) < size:
            chunk = self.more(size - len(self.held))
            if not chunk:
                raise TeamServerError(f"the team server's answer ended at {len(self.held)} of {size} bytes")
            self.held += chunk
        return self.held[:size]


def _answer(reader: _Reader, limit: int) -> Answer:
    head = reader.head().decode("latin-1").split("\r\n")
    status = _status(head[0])
    fields: dict[str, str] = {}
    if len(head) - 1 > _HEADERS_MAX:
        raise TeamServerError(f"the team server's answer has over {_HEADERS_MAX} headers")
    for line in head[1:]:
        name, colon, value = line.partition(":")
        if not colon or not name or name != name.strip() or not name.isascii() or not name.isprintable():
            raise TeamServerError(f"the team server's answer has a malformed header {line[:80]!r}")
        key = name.lower()
        if key in fields and key in ("content-length", "content-type", "transfer-encoding"):
            raise TeamServerError(f"the team server's answer repeats its {key} header")
        fields[key] = value.strip()
    if "transfer-encoding" in fields:
        raise TeamServerError("the team server's answer is not sized by Content-Length (chunked): refused")
    size = fields.get("content-length", "")
    if not size.isascii() or not size.isdigit() or len(size) > _SIZE_DIGITS:
        raise TeamServerError(f"the team server's answer has no valid Content-Length ({size[:20]!r})")
    if int(size) > limit:
        raise TeamServerError(f"the team server's answer is over {limit} bytes ({int(size)})")
    return Answer(status, fields.get("content-type", "").lower(), reader.exactly(int(size)))


def _status(line: str) -> int:
    """The code of ``HTTP/1.x NNN reason``; anything else is refused."""
    version, _, rest = line.partition(" ")
    code, _, _ = rest.partition(" ")
    if version not in ("HTTP/1.1", "HTTP/1.0") or len(code) != _CODE_DIGITS or not code.isascii() or not code.isdigit():
        raise TeamServerError(f"the team server's answer does not start with an HTTP status line ({line[:80]!r})")
    return int(code)

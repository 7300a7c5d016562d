"""ZIP archives built by hand for the archive readers' tests: hostile, encrypted, zip64, patched names."""

from __future__ import annotations

import io
import stat
import struct
import zipfile
from collections.abc import Callable


def encrypted(data: bytes) -> bytes:
    """Set the 'encrypted' bit in the local and the central header."""
    out = bytearray(data)
    out[out.find(b"PK\x03\x04") + 6] |= 0x1
    out[out.find(b"PK\x01\x02") + 8] |= 0x1
    return bytes(out)


def zip64_local(name: str, body: bytes) -> bytes:
    """A small entry written with ZIP64 sizes: zipfile puts the ZIP64 extra field in the local header only."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
        info.external_attr = (stat.S_IFREG | 0o644) << 16
        with archive.open(info, "w", force_zip64=True) as stream:
            stream.write(body)
    return out.getvalue()


def zip_of(*entries: tuple[str, bytes], mode: int = 0o644, method: int = zipfile.ZIP_DEFLATED) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, body in entries:
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = (stat.S_IFREG | mode) << 16 if not name.endswith("/") else (stat.S_IFDIR | 0o755) << 16
            info.compress_type = method
            archive.writestr(info, body)
    return out.getvalue()


def with_info(name: str, body: bytes, change: Callable[[zipfile.ZipInfo], None]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
        info.external_attr = (stat.S_IFREG | 0o644) << 16
        change(info)
        archive.writestr(info, body)
    return out.getvalue()


def patched_name(data: bytes, old: bytes, new: bytes) -> bytes:
    """Rewrite a name in both the local header and the central directory (same length)."""
    assert len(old) == len(new)
    return data.replace(old, new)


BOMB = b"\x00" * (8 * 1024 * 1024)


HOSTILE: dict[str, tuple[bytes, str]] = {
    "absolute path": (zip_of(("/etc/passwd", b"x")), "absolute"),
    "drive path": (zip_of(("C:/x.txt", b"x")), "drive"),
    "UNC path": (zip_of(("\\\\host\\share\\x", b"x")), "UNC"),
    "backslash traversal": (zip_of(("a\\..\\..\\x", b"x")), "backslash"),
    "NUL in a name": (patched_name(zip_of(("aXb.txt", b"x")), b"aXb.txt", b"a\x00b.txt"), "NUL"),
    "empty name": (zip_of(("", b"x")), "empty"),
    "dot-dot": (zip_of(("../escape.txt", b"x")), "'..'"),
    "dot-dot inside": (zip_of(("a/../../escape.txt", b"x")), "'..'"),
    "double slash": (zip_of(("a//b.txt", b"x")), "empty segment"),
    "symlink": (
        with_info("link", b"/etc/passwd", lambda i: setattr(i, "external_attr", (stat.S_IFLNK | 0o777) << 16)),
        "symlink",
    ),
    "device": (with_info("dev", b"", lambda i: setattr(i, "external_attr", (stat.S_IFCHR | 0o666) << 16)), "device"),
    "fifo": (with_info("pipe", b"", lambda i: setattr(i, "external_attr", (stat.S_IFIFO | 0o666) << 16)), "FIFO"),
    "setuid": (zip_of(("run.sh", b"#!/bin/sh\n"), mode=0o4755), "setuid"),
    "hard link extra field": (
        with_info("h", b"x", lambda i: setattr(i, "extra", struct.pack("<HH", 0x000D, 4) + b"ab\x00\x00")),
        "extra field 0x000d",
    ),
    "duplicate names": (
        patched_name(zip_of(("dup1.txt", b"1"), ("dup2.txt", b"2")), b"dup2.txt", b"dup1.txt"),
        "duplicate",
    ),
    "case twins": (zip_of(("Readme.md", b"1"), ("README.md", b"2")), "twin"),
    "unicode twins": (zip_of(("caf\u00e9.md", b"1"), ("cafe\u0301.md", b"2")), "twin"),
    "file and directory": (zip_of(("a", b"1"), ("a/b.txt", b"2")), "file and a directory"),
    "too many entries": (zip_of(*((f"f{i}", b"x") for i in range(12))), "entry limit"),
    "entry too large": (zip_of(("big.bin", b"y" * 3000)), "entry limit"),
    "total too large": (zip_of(("a", b"y" * 900), ("b", b"y" * 900)), "in all"),
    "compression bomb": (zip_of(("bomb", BOMB)), "compression bomb"),
    "nested zip by name": (zip_of(("inner.zip", b"not really")), "by its name"),
    "nested gzip by bytes": (zip_of(("data.bin", b"\x1f\x8b\x08\x00rest")), "by its first bytes"),
    "nested zip by bytes": (zip_of(("data.bin", zip_of(("x", b"y")))), "by its first bytes"),
    "nested tar by bytes": (zip_of(("data.bin", b"\x00" * 257 + b"ustar" + b"\x00" * 250)), "by its first bytes"),
    "encrypted": (encrypted(zip_of(("s.txt", b"x"))), "encrypted"),
    "unknown compression": (zip_of(("b.txt", b"x" * 100), method=zipfile.ZIP_BZIP2), "compression method"),
    "prepended data": (b"MZ" + b"\x00" * 62 + zip_of(("a.txt", b"x")), "prepended"),
    "appended data": (zip_of(("a.txt", b"x")) + b"trailing", "after the archive"),
    "not a zip": (b"%PDF-1.7 definitely not", "prepended"),
    "leading dash": (zip_of(("-rf", b"x")), "leading '-'"),
    "ZIP64 in a local header": (zip64_local("a.md", b"x\n"), "ZIP64"),
    "a 255-character name": (zip_of(("n" * 251 + ".md", b"x")), "longer than"),
    "a name 34 segments long": (zip_of(("d/" * 33 + "x.md", b"x")), "32 segments"),
}

"""ZIP archives from parties the Lead does not control: checked whole before anything is extracted,
extracted with a hard byte budget through directory handles; and deterministic ZIPs of our own.

The check reads the central directory, each local header and at most ``MAGIC_BYTES`` of each
entry (to recognise a nested archive). ``read_checked`` then decompresses the entries in memory,
trusting no declared size: each is decompressed against its declared size as a budget, and one
byte more is a refusal. So the caller can judge every entry's content before anything is written
(``write_checked``).
"""

from __future__ import annotations

import io
import os
import stat
import struct
import unicodedata
import zipfile
from dataclasses import dataclass

from handoff_core.errors import InvalidContent, UnsafePath
from handoff_core.files.paths import check_name, open_dir
from handoff_core.files.publishing import new_temp_name, publish

__all__ = [
    "LIMITS",
    "Entry",
    "Limits",
    "check_archive",
    "deterministic_zip",
    "read_checked",
    "write_checked",
]

MAGIC_BYTES = 512
_NESTED_SUFFIXES = (".zip", ".jar", ".war", ".whl", ".apk", ".tar", ".tgz", ".gz", ".bz2", ".xz", ".7z", ".rar", ".zst")
_MAGIC = (
    b"PK\x03\x04",
    b"PK\x05\x06",
    b"\x1f\x8b",
    b"BZh",
    b"\xfd7zXZ\x00",
    b"7z\xbc\xaf\x27\x1c",
    b"Rar!",
    b"\x28\xb5\x2f\xfd",
)
_ALLOWED_EXTRA = {0x5455, 0x7875, 0x000A}  # extended timestamp, Unix uid/gid, NTFS times
_ZIP64 = 0x0001
_EOCD = struct.Struct("<4s4H2LH")
_ZIP64_COUNT, _ZIP64_SIZE = 0xFFFF, 0xFFFFFFFF  # a count or size that says "see the ZIP64 record"
_LOCAL = struct.Struct("<4s5H3L2H")  # signature .. compressed, uncompressed size, name and extra lengths
# Every name is published through a temp name beside it (``layout.temp_name``), so a segment
# must leave room for that within the 255 bytes a file system allows a name.
MAX_SEGMENT_BYTES = 255 - len(new_temp_name(""))
MAX_DEPTH = 32  # segments in one entry's name
MAX_NAME_BYTES = 1024


@dataclass(frozen=True)
class Limits:
    entries: int = 50_000
    entry_bytes: int = 64 * 1024 * 1024
    total_bytes: int = 512 * 1024 * 1024
    ratio: int = 200  # uncompressed : compressed, for entries over 1 MiB


LIMITS = Limits()


def refusal(entry: str, rule: str) -> InvalidContent:
    """The one form of every refusal of a return: the entry, the rule, and that nothing was written."""
    return InvalidContent(f"return refused: entry {entry!r}: {rule}; nothing of it was written or extracted")


def _check_layout(data: bytes) -> None:
    """One archive from its first byte to its last: no data before it, no ZIP64, one central directory."""
    if not data.startswith(b"PK\x03\x04") and not data.startswith(b"PK\x05\x06"):
        raise refusal("(archive)", "data before the first entry (prepended bytes) or not a ZIP")
    at = data.rfind(b"PK\x05\x06", max(0, len(data) - 65_557))
    if at < 0 or len(data) < at + _EOCD.size:
        raise refusal("(archive)", "no end of central directory")
    _, disk, _, _, entries, size, offset, comment = _EOCD.unpack_from(data, at)
    if disk != 0 or _ZIP64_COUNT in (entries,) or _ZIP64_SIZE in (size, offset):
        raise refusal("(archive)", "multi-disk or ZIP64 archives are not accepted")
    if offset + size != at or at + _EOCD.size + comment != len(data):
        raise refusal("(archive)", "bytes before or after the archive, or a central directory that lies")


def _check_name(name: str) -> tuple[str, ...]:
    if not name or "\x00" in name:
        raise refusal(name, "an empty name or a NUL character")
    if hidden := [char for char in name if not char.isprintable() and char != " "]:
        # bidirectional controls, zero-width and control characters make a name read as another
        raise refusal(name, f"an invisible, bidirectional or control character (U+{ord(hidden[0]):04X}) in the name")
    if "\\" in name or name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        raise refusal(name, "an absolute, drive, UNC or backslash path")
    parts = tuple(name.rstrip("/").split("/"))
    if any(part in ("", ".", "..") for part in parts):
        raise refusal(name, "'..', '.' or an empty segment: the path could leave the extraction folder")
    try:
        for part in parts:
            check_name(part)
    except UnsafePath as exc:
        raise refusal(name, exc.message) from exc
    longest = max(len(part.encode()) for part in parts)
    if longest > MAX_SEGMENT_BYTES or len(parts) > MAX_DEPTH or len(name.encode()) > MAX_NAME_BYTES:
        raise refusal(
            name,
            f"a name longer than {MAX_SEGMENT_BYTES} bytes a segment, {MAX_DEPTH} segments or "
            f"{MAX_NAME_BYTES} bytes in all (this one: {longest}, {len(parts)}, {len(name.encode())})",
        )
    return parts


def _check_kind(info: zipfile.ZipInfo) -> None:
    mode = info.external_attr >> 16
    kind = stat.S_IFMT(mode)
    if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
        what = "a symlink" if kind == stat.S_IFLNK else "a device, FIFO or socket"
        raise refusal(info.filename, f"{what} is never extracted")
    if mode & (stat.S_ISUID | stat.S_ISGID | stat.S_ISVTX):
        raise refusal(info.filename, "setuid, setgid or sticky mode bits")
    if info.flag_bits & 0x1:
        raise refusal(info.filename, "an encrypted entry")
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise refusal(info.filename, f"compression method {info.compress_type} is not stored or deflate")
    _check_extra(info.filename, info.extra, "central directory")


def _check_extra(name: str, extra: bytes, where: str) -> None:
    index = 0
    while index + 4 <= len(extra):
        tag, size = struct.unpack_from("<HH", extra, index)
        if tag == _ZIP64:
            raise refusal(name, f"a ZIP64 extra field in its {where}: ZIP64 archives are not accepted")
        if tag not in _ALLOWED_EXTRA:
            raise refusal(name, f"extra field 0x{tag:04x} (links and unknown metadata are not accepted)")
        index += 4 + size


def _check_local(data: bytes, info: zipfile.ZipInfo) -> None:
    """The local header, which zipfile reads but never judges: the same rules as the central directory."""
    at = info.header_offset
    if at + _LOCAL.size > len(data):
        raise refusal(info.filename, "its local header lies outside the archive")
    signature, *_, packed, size, name_length, extra_length = _LOCAL.unpack_from(data, at)
    if signature != b"PK\x03\x04":
        raise refusal(info.filename, "no local header where the central directory points")
    if _ZIP64_SIZE in (packed, size):
        raise refusal(info.filename, "ZIP64 sizes in its local header: ZIP64 archives are not accepted")
    start = at + _LOCAL.size + name_length
    _check_extra(info.filename, data[start : start + extra_length], "local header")


def _check_sizes(info: zipfile.ZipInfo, limits: Limits) -> None:
    if info.file_size > limits.entry_bytes:
        raise refusal(info.filename, f"{info.file_size} bytes, over the {limits.entry_bytes}-byte entry limit")
    big = info.file_size > 1024 * 1024
    if big and info.file_size > limits.ratio * max(1, info.compress_size):
        raise refusal(info.filename, f"compresses more than {limits.ratio}:1 (a compression bomb)")


def _check_collisions(names: list[tuple[str, ...]], infos: list[zipfile.ZipInfo]) -> None:
    seen: dict[str, str] = {}
    files = {"/".join(parts) for parts, info in zip(names, infos, strict=True) if not info.is_dir()}
    for parts, info in zip(names, infos, strict=True):
        key = unicodedata.normalize("NFC", "/".join(parts)).casefold()
        if key in seen:
            rule = "a duplicate name" if seen[key] == "/".join(parts) else "a case or Unicode-normalisation twin"
            raise refusal(info.filename, f"{rule} of {seen[key]!r}")
        seen[key] = "/".join(parts)
        for depth in range(1, len(parts)):
            if "/".join(parts[:depth]) in files:
                raise refusal(info.filename, f"a file and a directory share the name {'/'.join(parts[:depth])!r}")


def _check_nested(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> None:
    if info.filename.lower().endswith(_NESTED_SUFFIXES):
        raise refusal(info.filename, "a nested archive (by its name)")
    if info.is_dir():
        return
    with archive.open(info) as stream:
        head = stream.read(MAGIC_BYTES)
    if head.startswith(_MAGIC) or head[257:262] == b"ustar":
        raise refusal(info.filename, "a nested archive (by its first bytes)")


def check_archive(data: bytes, limits: Limits = LIMITS) -> list[zipfile.ZipInfo]:
    """The archive's entries when every rule holds; else InvalidContent naming the entry and the rule."""
    _check_layout(data)
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError, struct.error) as exc:
        raise refusal("(archive)", f"not a readable ZIP ({exc})") from exc
    infos = archive.infolist()
    if len(infos) > limits.entries:
        raise refusal("(archive)", f"{len(infos)} entries, over the {limits.entries}-entry limit")
    names = [_check_name(info.orig_filename) for info in infos]  # before zipfile cut a name at a NUL
    for info in infos:
        _check_kind(info)
        _check_local(data, info)
        _check_sizes(info, limits)
    if sum(info.file_size for info in infos) > limits.total_bytes:
        raise refusal("(archive)", f"more than {limits.total_bytes} bytes in all")
    _check_collisions(names, infos)
    try:
        for info in infos:
            _check_nested(archive, info)
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise refusal("(archive)", f"an entry cannot be read ({exc})") from exc
    return infos


@dataclass(frozen=True)
class Entry:
    """One checked entry, decompressed: a file's bytes, or None for a folder."""

    parts: tuple[str, ...]
    body: bytes | None
    mode: int  # the permission bits the archive declares (0 when it declares none)

    @property
    def name(self) -> str:
        return "/".join(self.parts)


def read_checked(data: bytes, infos: list[zipfile.ZipInfo]) -> list[Entry]:
    """Every checked entry decompressed in memory; no entry may yield more than it declared."""
    archive = zipfile.ZipFile(io.BytesIO(data))
    entries = []
    for info in infos:
        parts = tuple(info.filename.rstrip("/").split("/"))
        mode = stat.S_IMODE(info.external_attr >> 16)
        if info.is_dir():
            entries.append(Entry(parts, None, mode))
            continue
        try:
            with archive.open(info) as stream:
                body = stream.read(info.file_size + 1)  # the declared size is a budget, never trusted
        except (zipfile.BadZipFile, OSError, EOFError) as exc:
            raise refusal(info.filename, f"corrupt data ({exc})") from exc
        if len(body) != info.file_size:
            raise refusal(info.filename, "its data is not the size its header declares")
        entries.append(Entry(parts, body, mode))
    return entries


def write_checked(entries: list[Entry], root_fd: int) -> int:
    """Publish read entries below the directory ``root_fd`` (read-only files); the bytes written."""
    written = 0
    for entry in entries:
        fd = root_fd
        try:
            for part in entry.parts if entry.body is None else entry.parts[:-1]:
                child = open_dir(fd, part, create=True)
                if fd != root_fd:
                    os.close(fd)
                fd = child
            if entry.body is not None:
                publish(fd, entry.parts[-1], entry.body, mode=0o444)
                written += len(entry.body)
        finally:
            if fd != root_fd:
                os.close(fd)
    return written


def deterministic_zip(files: list[tuple[str, bytes]]) -> bytes:
    """The same bytes for the same files: sorted names, fixed time and modes, no extra fields."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for name, body in sorted(files):
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = (stat.S_IFREG | 0o644) << 16
            info.create_system = 3  # Unix, so the mode bits mean the same everywhere
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, body)
    return out.getvalue()

"""Zip archives of foreign logs (Inspect's ``.eval``), whatever compression their members use.

Inspect writes its members with Zstandard (zip method 93). A zstd member is read as stored and
decompressed whole, every frame (Inspect starts a new frame every 200 MiB of input; zipfile's own
reader stops at the first), by :mod:`compression.zstd` from Python 3.14 and ``backports.zstd``
before (a dependency of reviewlab there); the CRC is checked here. A member in a method nothing
here decompresses (an encrypted one, a method number nobody registered) is an
:class:`~reviewlab.recording.interop.ImportFormatError` naming the member and the method, never
zipfile's bare ``NotImplementedError``.
"""

from __future__ import annotations

import copy
import sys
import zipfile as _stdlib_zipfile
import zlib
from pathlib import Path
from typing import Any, Final

from reviewlab.recording.interop._common import ImportFormatError

METHOD_NAMES: Final[dict[int, str]] = {
    0: "stored",
    8: "deflate",
    9: "deflate64",
    12: "bzip2",
    14: "lzma",
    93: "zstd",
    95: "xz",
    98: "ppmd",
    99: "AES encryption",
}
"""Zip compression method numbers (APPNOTE 4.4.5) and their names, for error messages."""

_ZSTD: Final = 93


def read_members(path: Path, names: list[str] | None = None) -> dict[str, bytes]:
    """The bytes of the members ``names`` of the zip at ``path`` (all members when ``None``).

    Raises :class:`ImportFormatError` for a file that is not a zip, a member that is missing,
    and a member compressed by a method this Python cannot read (named, with how to get it).
    """
    try:
        with _stdlib_zipfile.ZipFile(path) as archive:
            infos = {info.filename: info for info in archive.infolist()}
            wanted = list(infos) if names is None else names
            out: dict[str, bytes] = {}
            for name in wanted:
                info = infos.get(name)
                if info is None:
                    raise ImportFormatError(path, name, "member missing from the archive")
                _check_readable(path, info)
                zstd = info.compress_type == _ZSTD
                out[name] = _zstd_member(archive, info, path) if zstd else archive.read(info)
            return out
    except _stdlib_zipfile.BadZipFile as exc:
        raise ImportFormatError(
            path, "zip", f"unreadable {path.suffix or 'zip'} archive: {exc}"
        ) from None


def member_names(path: Path) -> list[str]:
    """The member names of the zip at ``path``, in archive order."""
    try:
        with _stdlib_zipfile.ZipFile(path) as archive:
            return archive.namelist()
    except _stdlib_zipfile.BadZipFile as exc:
        raise ImportFormatError(
            path, "zip", f"unreadable {path.suffix or 'zip'} archive: {exc}"
        ) from None


def _check_readable(path: Path, info: _stdlib_zipfile.ZipInfo) -> None:
    method = info.compress_type
    name = METHOD_NAMES.get(method, "an unregistered method")
    if info.flag_bits & 0x1:
        raise ImportFormatError(path, info.filename, "member is encrypted; nothing here reads it")
    if method == _ZSTD:
        try:
            _zstd_decompress()
        except ImportError:
            raise ImportFormatError(
                path,
                info.filename,
                "member is compressed with zstd (zip method 93), which Python "
                f"{sys.version_info.major}.{sys.version_info.minor} reads only through "
                "backports-zstd: pip install backports-zstd",
            ) from None
        return  # read as stored and decompressed here (_zstd_member)
    try:
        check: Any = getattr(_stdlib_zipfile, "_check_compression")  # noqa: B009 (private)
        check(method)  # zipfile's own test of what it decompresses
    except NotImplementedError:
        raise ImportFormatError(
            path,
            info.filename,
            f"member is compressed with {name} (zip method {method}), which this Python "
            "cannot decompress",
        ) from None
    except RuntimeError as exc:  # a known method whose module (bz2, lzma) is missing
        raise ImportFormatError(
            path, info.filename, f"member is compressed with {name} (zip method {method}): {exc}"
        ) from None


def _zstd_member(archive: Any, info: _stdlib_zipfile.ZipInfo, path: Path) -> bytes:
    """A zstd member's bytes, every frame of it: Inspect caps a frame at 200 MiB of input, and
    zipfile's reader stops at the first frame (then fails the CRC). The raw stream is read as
    stored and decompressed whole; the CRC is checked here."""
    raw_info = copy.copy(info)
    raw_info.compress_type = _stdlib_zipfile.ZIP_STORED
    raw_info.file_size = info.compress_size
    raw_info.CRC = None  # type: ignore[assignment]  # the stored bytes have no CRC of their own
    with archive.open(raw_info) as handle:
        data = _zstd_decompress()(handle.read())
    if zlib.crc32(data) != info.CRC or len(data) != info.file_size:
        raise ImportFormatError(path, info.filename, "member fails its CRC or size check")
    return data


def _zstd_decompress() -> Any:
    if sys.version_info >= (3, 14):
        from compression import zstd  # type: ignore[import-not-found]
    else:
        from backports import zstd
    return zstd.decompress

"""Zip archives of foreign logs (Inspect's ``.eval``), whatever compression their members use.

Inspect writes its members with Zstandard (zip method 93) since its 0.3.1xx releases. The
standard library reads method 93 only from Python 3.14; before that the reader is
``backports.zstd``'s copy of :mod:`zipfile` (a dependency of reviewlab on those versions); a zstd
member is decompressed whole, every frame (zipfile alone stops at the first). A
member in a method that neither reads (an encrypted one, a method number nobody registered) is an
:class:`~reviewlab.recording.interop.ImportFormatError` naming the member and the method, never
the library's bare ``NotImplementedError``.
"""

from __future__ import annotations

import copy
import sys
import zipfile as _stdlib_zipfile
import zlib
from pathlib import Path
from types import ModuleType
from typing import Any, Final

from reviewlab.recording.interop._common import ImportFormatError

__all__ = ["METHOD_NAMES", "member_names", "read_members", "zip_module"]

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


def zip_module() -> ModuleType:
    """The :mod:`zipfile` that reads zstd members here: the standard one from Python 3.14,
    ``backports.zstd.zipfile`` before, or the standard one (no zstd) without the backport."""
    if sys.version_info >= (3, 14):
        return _stdlib_zipfile
    try:
        from backports.zstd import zipfile as backported
    except ImportError:
        return _stdlib_zipfile
    return backported


def read_members(path: Path, names: list[str] | None = None) -> dict[str, bytes]:
    """The bytes of the members ``names`` of the zip at ``path`` (all members when ``None``).

    Raises :class:`ImportFormatError` for a file that is not a zip, a member that is missing,
    and a member compressed by a method this Python cannot read (named, with how to get it).
    """
    module = zip_module()
    try:
        with module.ZipFile(path) as archive:
            infos = {info.filename: info for info in archive.infolist()}
            wanted = list(infos) if names is None else names
            out: dict[str, bytes] = {}
            for name in wanted:
                info = infos.get(name)
                if info is None:
                    raise ImportFormatError(path, name, "member missing from the archive")
                _check_readable(path, info, module)
                out[name] = (
                    _zstd_member(archive, info, path)
                    if info.compress_type == _ZSTD
                    else (archive.read(info))
                )
            return out
    except (_stdlib_zipfile.BadZipFile, module.BadZipFile) as exc:
        raise ImportFormatError(
            path, "zip", f"unreadable {path.suffix or 'zip'} archive: {exc}"
        ) from None


def member_names(path: Path) -> list[str]:
    """The member names of the zip at ``path``, in archive order."""
    module = zip_module()
    try:
        with module.ZipFile(path) as archive:
            return archive.namelist()
    except (_stdlib_zipfile.BadZipFile, module.BadZipFile) as exc:
        raise ImportFormatError(
            path, "zip", f"unreadable {path.suffix or 'zip'} archive: {exc}"
        ) from None


def _check_readable(path: Path, info: _stdlib_zipfile.ZipInfo, module: ModuleType) -> None:
    method = info.compress_type
    name = METHOD_NAMES.get(method, "an unregistered method")
    if info.flag_bits & 0x1:
        raise ImportFormatError(path, info.filename, "member is encrypted; nothing here reads it")
    if method == _ZSTD and not _reads_zstd(module):
        raise ImportFormatError(
            path,
            info.filename,
            "member is compressed with zstd (zip method 93), which Python "
            f"{sys.version_info.major}.{sys.version_info.minor} reads only through "
            "backports-zstd: pip install backports-zstd",
        )
    try:
        module._check_compression(method)  # the library's own test of what it can decompress
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


def _reads_zstd(module: ModuleType) -> bool:
    return getattr(module, "ZIP_ZSTANDARD", None) == _ZSTD

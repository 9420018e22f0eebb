"""Where a columnar corpus lives: a local path, or an fsspec URL (``file://``, ``memory://``,
``s3://``, ``gs://``, ``abfs://`` ...).

A *location* is a ``str`` or an ``os.PathLike``. A string that starts with a scheme
(``proto://``) is a URL, read and written through :mod:`fsspec` (a dependency of reviewlab; the
object stores need their own fsspec package, the ``reviewlab[cloud]`` extra: ``s3fs``,
``gcsfs``, ``adlfs``). Anything else is a local path and takes exactly the local code paths it
always took (no fsspec on them).

Invariants: a URL keeps the spelling it was given (``memory://corpus/parts`` lists its
partitions as ``memory://corpus/parts/part-00000.parquet``), so every error names a
partition as the user wrote its directory; only Parquet lives behind a URL (a ``.parquet``
file or a directory of ``*.parquet`` partitions, read in name order).
"""

from __future__ import annotations

import os
import posixpath
import re
from pathlib import Path
from typing import IO, Any

Location = Path | str
"""A local :class:`~pathlib.Path`, or a URL kept as the string it was given."""

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*://")


def is_url(location: object) -> bool:
    """Whether ``location`` is a URL string (``proto://...``) rather than a local path."""
    return isinstance(location, str) and _SCHEME.match(location) is not None


def location_of(location: str | os.PathLike[str]) -> Location:
    """``location`` as a :class:`Path`, or as the URL string itself."""
    return location if is_url(location) else Path(location)  # type: ignore[return-value]


def url_filesystem(url: str) -> tuple[Any, str]:
    """The fsspec filesystem of ``url`` and the path on it.

    A scheme fsspec does not know (or whose package is missing) is a ``ValueError`` naming
    the URL and the package to install."""
    import fsspec

    try:
        return fsspec.core.url_to_fs(url)
    except (ImportError, ValueError) as exc:
        raise ValueError(
            f"{url}: no filesystem for this URL ({exc}); object stores need their fsspec "
            "package: pip install 'reviewlab[cloud]' (s3fs, gcsfs, adlfs)"
        ) from None


def url_join(url: str, name: str) -> str:
    """``url`` with ``name`` appended as one more path segment."""
    return f"{url.rstrip('/')}/{name}"


def url_parquet_parts(url: str) -> list[str]:
    """The partitions of a URL corpus: ``[url]`` for a ``.parquet`` object, else the
    directory's ``*.parquet``, by name, as URLs spelt like ``url``.

    A missing location is a :class:`FileNotFoundError` naming it; a directory without a
    ``.parquet`` file an :class:`~reviewlab.recording._file_errors.EpisodeFormatError`."""
    from reviewlab.recording._file_errors import EpisodeFormatError

    fs, path = url_filesystem(url)
    if fs.isdir(path):
        names = sorted(
            name
            for name in (posixpath.basename(p.rstrip("/")) for p in fs.ls(path, detail=False))
            if name.endswith(".parquet")
        )
        if not names:
            raise EpisodeFormatError(url, 0, "<parquet>", "directory holds no .parquet file")
        return [url_join(url, name) for name in names]
    if not fs.exists(path):
        raise FileNotFoundError(2, "No such file or directory", url)
    return [url]


def open_input(url: str) -> IO[bytes]:
    """``url`` opened for reading (binary, seekable as Parquet needs); a missing object is a
    :class:`FileNotFoundError` naming the URL."""
    fs, path = url_filesystem(url)
    try:
        return fs.open(path, "rb")  # type: ignore[no-any-return]
    except FileNotFoundError:
        raise FileNotFoundError(2, "No such file or directory", url) from None

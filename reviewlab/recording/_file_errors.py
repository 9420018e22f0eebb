"""What a defective episode file is reported as, and how a file is opened: shared by every reader.

:class:`EpisodeFormatError` names the file, the line (or row), the dotted field
and the problem; :class:`SkippedLine` is one record of ``on_error="skip"``.
:func:`field_of` turns pydantic's first error into that field and message;
:func:`open_decompressed` opens a file as its decompressed bytes (gzip by magic
bytes). The JSONL reader (:mod:`reviewlab.recording._files`), the columnar
readers (:mod:`reviewlab.recording.columnar`) and the fast JSONL decoder
(:mod:`reviewlab.recording.jsonl`) all use these, so this module imports none
of them.
"""

from __future__ import annotations

import gzip
import os
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, cast

from pydantic import ValidationError

from reviewlab.recording._schema import SCHEMA_VERSIONS

GZIP_MAGIC = b"\x1f\x8b"
JSON_FIELD = "<json>"
GZIP_FIELD = "<gzip>"


class EpisodeFormatError(ValueError):
    """A line of an episode file that is not a valid ``reviewlab.episode/1`` (or ``/2``) episode.

    ``path``, ``line`` (1-based) and ``field`` (dotted path, or ``<json>`` /
    ``<gzip>``) say where; ``message`` says what.
    """

    def __init__(self, path: str | os.PathLike[str], line: int, field: str, message: str) -> None:
        self.path = str(path)
        self.line = line
        self.field = field
        self.message = message
        super().__init__(f"{self.path}:{line}: {field}: {message}")

    def __reduce__(self) -> tuple[Any, ...]:  # keep the error picklable (Dask, multiprocessing)
        return (type(self), (self.path, self.line, self.field, self.message))


@dataclass(frozen=True)
class SkippedLine:
    """One line ``on_error="skip"`` left out, with the reason it was refused."""

    line: int
    """1-based line number in the (decompressed) file."""
    field: str
    """Dotted path of the offending field, ``<json>`` or ``<gzip>``."""
    message: str
    """What was wrong."""


def field_of(error: ValidationError) -> tuple[str, str]:
    """The dotted location and message of the first error pydantic reported."""
    first = error.errors(include_url=False)[0]
    loc = ".".join(str(part) for part in first["loc"])
    kind = first["type"]
    if kind == "json_invalid":
        return JSON_FIELD, first["msg"]
    if loc == "schema":
        return (
            loc,
            f"unsupported schema version {first.get('input')!r} "
            f"(expected one of {', '.join(map(repr, SCHEMA_VERSIONS))})",
        )
    if kind == "extra_forbidden":
        return loc, "unknown field"
    return loc or JSON_FIELD, first["msg"]


def open_decompressed(path: Path) -> IO[bytes]:
    """The file as a binary stream of its decompressed bytes (gzip by magic bytes)."""
    raw = open(path, "rb")  # noqa: SIM115 - handed to the caller, who closes it
    try:
        head = raw.read(2)
        raw.seek(0)
    except BaseException:
        raw.close()
        raise
    if head == GZIP_MAGIC:
        return cast(IO[bytes], gzip.GzipFile(fileobj=raw, mode="rb"))
    return raw

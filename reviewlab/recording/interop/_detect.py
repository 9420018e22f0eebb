"""Which importer reads a file: format detection by content, never by name alone.

Rules, in order, the first that holds decides: zip magic bytes → ``inspect`` (an ``.eval``
archive); gzip, zstd, bzip2 or xz magic bytes → :class:`UnknownFormatError` naming the
compression; bytes that are not UTF-8 text → :class:`UnknownFormatError` ("binary data"); one JSON
document: ``resourceSpans`` → ``otel``, a ``trajectory`` of steps → ``swe_agent``, a
``trajectory_format`` of ``mini-swe-agent…`` → ``mini_swe_agent``, an ``object`` of ``trace`` or
``trace.span`` (or a ``data`` list of them) → ``openai_agents``, ``eval`` → ``inspect``, a
``history`` list or a list of events with ``timestamp`` → ``openhands``; JSON Lines: the first
non-blank line decides likewise (``resourceSpans``, ``resourceLogs`` or ``resourceMetrics`` →
``otel``; ``trace.span`` → ``openai_agents``; ``history`` → ``openhands``); anything else →
:class:`UnknownFormatError` naming the file and the known formats.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from reviewlab.core._vocab import IMPORT_FORMATS, ImportFormat
from reviewlab.recording._schema import Episode
from reviewlab.recording.interop._common import ImportFormatError
from reviewlab.recording.interop._inspect_ai import import_inspect
from reviewlab.recording.interop._mini_swe_agent import (
    import_mini_swe_agent,
    is_mini_swe_agent_trajectory,
)
from reviewlab.recording.interop._openai_agents import import_openai_agents, is_openai_agents_trace
from reviewlab.recording.interop._openhands import import_openhands
from reviewlab.recording.interop._otel_import import import_otel
from reviewlab.recording.interop._swe_agent import import_swe_agent, is_swe_agent_trajectory

IMPORTERS: Final[dict[ImportFormat, Callable[[str | os.PathLike[str]], list[Episode]]]] = {
    "openhands": import_openhands,
    "inspect": import_inspect,
    "swe_agent": import_swe_agent,
    "mini_swe_agent": import_mini_swe_agent,
    "openai_agents": import_openai_agents,
    "otel": import_otel,
}
"""Each known format and the function that imports it."""
FORMATS: Final = IMPORT_FORMATS
"""The formats :func:`detect_format` knows, in the order the CLI lists them."""
assert set(IMPORTERS) == set(FORMATS), "every import format has its importer"

_ZIP_MAGIC = b"PK\x03\x04"
_COMPRESSED: Final = {
    b"\x1f\x8b": "gzip",
    b"\x28\xb5\x2f\xfd": "zstd",
    b"BZh": "bzip2",
    b"\xfd7zXZ\x00": "xz",
}
"""Magic bytes of a whole-file compression no importer reads, and its name."""
_SNIFF_BYTES = 1 << 16


class UnknownFormatError(ImportFormatError):
    """A file none of the importers recognises; names the file and the known formats."""

    def __init__(self, path: str | os.PathLike[str], why: str) -> None:
        super().__init__(path, "unknown format", f"{why}; known formats: {', '.join(FORMATS)}")


def detect_format(path: str | os.PathLike[str]) -> ImportFormat:
    """The format of ``path`` (one of :data:`FORMATS`), by the rules of the module docstring."""
    where = Path(path)
    with open(where, "rb") as handle:
        head = handle.read(_SNIFF_BYTES)
    if head.startswith(_ZIP_MAGIC):
        return "inspect"
    for magic, name in _COMPRESSED.items():
        if head.startswith(magic):
            raise UnknownFormatError(where, f"{name}-compressed data: decompress it first")
    if b"\x00" in head:
        raise UnknownFormatError(where, "binary data, not a JSON log")
    try:
        text = where.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise UnknownFormatError(where, "binary data, not UTF-8 text") from None
    try:
        document: Any = json.loads(text)
    except json.JSONDecodeError:
        document = None
    if document is not None:
        found = _document_format(document)
        if found is None:
            raise UnknownFormatError(where, f"a JSON {type(document).__name__} of no known shape")
        return found
    first = next((line for line in text.splitlines() if line.strip()), "")
    try:
        record = json.loads(first)
    except json.JSONDecodeError:
        raise UnknownFormatError(where, "neither JSON nor JSON Lines") from None
    found = _document_format(record) if isinstance(record, dict) else None
    if found is None:
        raise UnknownFormatError(where, "JSON Lines whose first record has no known shape")
    return found


def import_auto(path: str | os.PathLike[str]) -> tuple[ImportFormat, list[Episode]]:
    """The detected format of ``path`` and its episodes, read by that format's importer."""
    found = detect_format(path)
    return found, IMPORTERS[found](path)


def _document_format(document: Any) -> ImportFormat | None:
    if isinstance(document, dict):
        if any(key in document for key in ("resourceSpans", "resourceLogs", "resourceMetrics")):
            return "otel"
        if is_swe_agent_trajectory(document):
            return "swe_agent"
        if is_mini_swe_agent_trajectory(document):
            return "mini_swe_agent"
        if is_openai_agents_trace(document):
            return "openai_agents"
        if "eval" in document:
            return "inspect"
        if isinstance(document.get("history"), list):
            return "openhands"
        return None
    events = document[:3] if isinstance(document, list) else []
    if events and all(isinstance(event, dict) and "timestamp" in event for event in events):
        return "openhands"
    return None

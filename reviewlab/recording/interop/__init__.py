"""Other systems' logs in and out: importers, the OpenTelemetry exporter, format conversion.

* :func:`import_openhands`, :func:`import_inspect`, :func:`import_swe_agent`,
  :func:`import_mini_swe_agent`, :func:`import_openai_agents`, :func:`import_otel`, and
  :func:`import_auto` (the format detected from the content), :func:`import_folder` (every
  log of a folder, the files it skipped listed with why); :class:`AgentsTraceFile`, the
  Agents SDK tracing processor that writes what :func:`import_openai_agents` reads.
* :func:`export_otel`: recorded episodes as OTLP/JSON, one trace per episode.
* :func:`convert_corpus`: a corpus copied between JSONL and columnar Parquet.

Each importer maps the foreign tool names onto ours (unknown names are kept), turns the
system's own timeouts into right-censored calls, and raises :class:`ImportFormatError`
(naming file and place) on input it cannot read, never returning a partial result.
"""

from typing import TYPE_CHECKING

from reviewlab.core._lazy import lazy_names

if TYPE_CHECKING:
    from reviewlab.recording.interop._common import ImportFormatError, classify_command
    from reviewlab.recording.interop._convert import convert_corpus
    from reviewlab.recording.interop._detect import (
        FORMATS,
        IMPORTERS,
        UnknownFormatError,
        detect_format,
        import_auto,
    )
    from reviewlab.recording.interop._folder import FolderImport, import_folder
    from reviewlab.recording.interop._inspect_ai import import_inspect
    from reviewlab.recording.interop._mini_swe_agent import import_mini_swe_agent
    from reviewlab.recording.interop._openai_agents import AgentsTraceFile, import_openai_agents
    from reviewlab.recording.interop._openhands import import_openhands
    from reviewlab.recording.interop._otel_export import episode_document, export_otel
    from reviewlab.recording.interop._otel_import import OtelImport, import_otel, read_otel
    from reviewlab.recording.interop._swe_agent import import_swe_agent

_HOMES = {
    "AgentsTraceFile": "reviewlab.recording.interop._openai_agents",
    "FORMATS": "reviewlab.recording.interop._detect",
    "FolderImport": "reviewlab.recording.interop._folder",
    "IMPORTERS": "reviewlab.recording.interop._detect",
    "ImportFormatError": "reviewlab.recording.interop._common",
    "OtelImport": "reviewlab.recording.interop._otel_import",
    "UnknownFormatError": "reviewlab.recording.interop._detect",
    "classify_command": "reviewlab.recording.interop._common",
    "convert_corpus": "reviewlab.recording.interop._convert",
    "detect_format": "reviewlab.recording.interop._detect",
    "episode_document": "reviewlab.recording.interop._otel_export",
    "export_otel": "reviewlab.recording.interop._otel_export",
    "import_auto": "reviewlab.recording.interop._detect",
    "import_folder": "reviewlab.recording.interop._folder",
    "import_inspect": "reviewlab.recording.interop._inspect_ai",
    "import_mini_swe_agent": "reviewlab.recording.interop._mini_swe_agent",
    "import_openai_agents": "reviewlab.recording.interop._openai_agents",
    "import_openhands": "reviewlab.recording.interop._openhands",
    "import_otel": "reviewlab.recording.interop._otel_import",
    "import_swe_agent": "reviewlab.recording.interop._swe_agent",
    "read_otel": "reviewlab.recording.interop._otel_import",
}
"""Where each public name lives: imported on first use, so importing
``reviewlab.recording.interop`` loads only what is asked for."""

__all__ = [
    "FORMATS",
    "IMPORTERS",
    "AgentsTraceFile",
    "FolderImport",
    "ImportFormatError",
    "OtelImport",
    "UnknownFormatError",
    "classify_command",
    "convert_corpus",
    "detect_format",
    "episode_document",
    "export_otel",
    "import_auto",
    "import_folder",
    "import_inspect",
    "import_mini_swe_agent",
    "import_openai_agents",
    "import_openhands",
    "import_otel",
    "import_swe_agent",
    "read_otel",
]

__getattr__, __dir__ = lazy_names(__name__, _HOMES)

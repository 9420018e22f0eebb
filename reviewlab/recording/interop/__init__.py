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

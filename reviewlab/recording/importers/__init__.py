"""Importers: real logs of other agent systems turned into ``reviewlab.episode/1`` episodes.

* :func:`import_openhands`: OpenHands trajectories (event lists, ``output.jsonl``).
* :func:`import_inspect`: Inspect AI eval logs (``.json`` and ``.eval``).
* :func:`import_swe_agent`: SWE-agent trajectories (``.traj``).
* :func:`import_otel`: OpenTelemetry traces as OTLP/JSON (GenAI or OpenInference spans).
* :func:`import_auto`: any of these, the format detected from the content.

Each maps the foreign tool names onto ours (``read_file``, ``list_files``,
``search_code``, ``run_command``; unknown names are kept), turns the system's
own timeouts into right-censored calls, and raises :class:`ImportFormatError`
(naming file and place) on input it cannot read, never returning a partial result.
"""

from reviewlab.recording.importers._common import ImportFormatError, classify_command
from reviewlab.recording.importers.detect import (
    FORMATS,
    IMPORTERS,
    UnknownFormatError,
    detect_format,
    import_auto,
)
from reviewlab.recording.importers.inspect_ai import import_inspect
from reviewlab.recording.importers.openhands import import_openhands
from reviewlab.recording.importers.otel import import_otel, read_otel
from reviewlab.recording.importers.swe_agent import import_swe_agent

__all__ = [
    "FORMATS",
    "IMPORTERS",
    "ImportFormatError",
    "UnknownFormatError",
    "classify_command",
    "detect_format",
    "import_auto",
    "import_inspect",
    "import_openhands",
    "import_otel",
    "import_swe_agent",
    "read_otel",
]

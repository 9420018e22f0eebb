"""Importers: real logs of other agent systems turned into ``reviewlab.episode/1`` episodes.

* :func:`import_openhands`: OpenHands trajectories (event lists, ``output.jsonl``).
* :func:`import_inspect`: Inspect AI eval logs (``.json`` and ``.eval``).

Each maps the foreign tool names onto ours (``read_file``, ``list_files``,
``search_code``, ``run_command``; unknown names are kept), turns the system's
own timeouts into right-censored calls, and raises :class:`ImportFormatError`
(naming file and place) on input it cannot read, never returning a partial result.
"""

from reviewlab.recording.importers._common import ImportFormatError, classify_command
from reviewlab.recording.importers.inspect_ai import import_inspect
from reviewlab.recording.importers.openhands import import_openhands

__all__ = ["ImportFormatError", "classify_command", "import_inspect", "import_openhands"]

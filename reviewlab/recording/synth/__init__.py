"""Synthetic corpora: seeded reviewer episodes, and the wedged-``query_code`` incident day.

:func:`synth_corpus` / :func:`write_synthetic` draw episodes from a :class:`SynthSpec` (the
same seed gives the same bytes); :func:`synth_tables` writes the same draws straight as Arrow
columns; :func:`make_incident` / :func:`write_incident` build the bundled incident day
(``source="incident"``). Internals: ``_draws`` (every random number, in order), ``_corpus``,
``_columns``, ``_incident_day``.
"""

from reviewlab.recording.synth._columns import BATCH_EPISODES, synth_tables
from reviewlab.recording.synth._corpus import (
    iter_synth,
    iter_synth_rows,
    synth_corpus,
    synth_rows,
    write_synthetic,
)
from reviewlab.recording.synth._draws import (
    DRAW_BYTES_PER_EPISODE,
    MAX_EPISODES,
    TOOLS,
    Draws,
    SynthSizeError,
    SynthSpec,
    ToolProfile,
    check_size,
    draw,
    file_tree,
)
from reviewlab.recording.synth._incident_day import (
    INCIDENT_EPISODE_ID,
    INCIDENT_SLOT,
    WEDGE_SEC,
    make_incident,
    write_incident,
)

__all__ = [
    "BATCH_EPISODES",
    "DRAW_BYTES_PER_EPISODE",
    "INCIDENT_EPISODE_ID",
    "INCIDENT_SLOT",
    "MAX_EPISODES",
    "TOOLS",
    "WEDGE_SEC",
    "Draws",
    "SynthSizeError",
    "SynthSpec",
    "ToolProfile",
    "check_size",
    "draw",
    "file_tree",
    "iter_synth",
    "iter_synth_rows",
    "make_incident",
    "synth_corpus",
    "synth_rows",
    "synth_tables",
    "write_incident",
    "write_synthetic",
]

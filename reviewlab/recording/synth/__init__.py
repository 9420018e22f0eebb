"""Synthetic corpora: seeded reviewer episodes, and the wedged-``query_code`` incident day.

:func:`synth_corpus` / :func:`write_synthetic` draw episodes from a :class:`SynthSpec` (the
same seed gives the same bytes); :func:`synth_tables` writes the same draws straight as Arrow
columns; :func:`make_incident` / :func:`write_incident` build the bundled incident day
(``source="incident"``). Internals: ``_draws`` (every random number, in order), ``_corpus``,
``_columns``, ``_incident_day``.
"""

from typing import TYPE_CHECKING

from reviewlab.core._lazy import lazy_names

if TYPE_CHECKING:
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

_HOMES = {
    "BATCH_EPISODES": "reviewlab.recording.synth._columns",
    "DRAW_BYTES_PER_EPISODE": "reviewlab.recording.synth._draws",
    "Draws": "reviewlab.recording.synth._draws",
    "INCIDENT_EPISODE_ID": "reviewlab.recording.synth._incident_day",
    "INCIDENT_SLOT": "reviewlab.recording.synth._incident_day",
    "MAX_EPISODES": "reviewlab.recording.synth._draws",
    "SynthSizeError": "reviewlab.recording.synth._draws",
    "SynthSpec": "reviewlab.recording.synth._draws",
    "TOOLS": "reviewlab.recording.synth._draws",
    "ToolProfile": "reviewlab.recording.synth._draws",
    "WEDGE_SEC": "reviewlab.recording.synth._incident_day",
    "check_size": "reviewlab.recording.synth._draws",
    "draw": "reviewlab.recording.synth._draws",
    "file_tree": "reviewlab.recording.synth._draws",
    "iter_synth": "reviewlab.recording.synth._corpus",
    "iter_synth_rows": "reviewlab.recording.synth._corpus",
    "make_incident": "reviewlab.recording.synth._incident_day",
    "synth_corpus": "reviewlab.recording.synth._corpus",
    "synth_rows": "reviewlab.recording.synth._corpus",
    "synth_tables": "reviewlab.recording.synth._columns",
    "write_incident": "reviewlab.recording.synth._incident_day",
    "write_synthetic": "reviewlab.recording.synth._corpus",
}
"""Where each public name lives: imported on first use, so importing
``reviewlab.recording.synth`` loads only what is asked for."""

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

__getattr__, __dir__ = lazy_names(__name__, _HOMES)

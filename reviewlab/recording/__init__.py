"""Recorded episodes: the ``reviewlab.episode/1`` and ``/2`` schema, files, frames, the recorder.

At the top: ``schema`` (the contract), ``files`` (load, save, iterate, the per-call frame; a
``.parquet`` path or a directory is the columnar form), ``file_errors``, ``locations`` (paths
and fsspec URLs) and ``ids`` (the episode-id rule). The families are sub-packages: ``jsonl``
(JSONL straight to columns), ``columnar`` (Parquet), ``synth`` (synthetic corpora and the
incident day), ``capture`` (live runs and bounded-tool calls as episodes) and ``interop``
(importers, the OTel exporter, format conversion), ``journal`` (a gateway's crash-safe
session files; a folder of them reads as a corpus).
"""

from typing import TYPE_CHECKING

from reviewlab.core._lazy import lazy_names

if TYPE_CHECKING:
    from reviewlab.recording._files import (
        FRAME_COLUMNS,
        EpisodeFormatError,
        LoadedEpisodes,
        SkippedLine,
        episodes_frame,
        iter_episodes,
        load_episodes,
        save_episodes,
    )
    from reviewlab.recording._schema import (
        SCHEMA_VERSION,
        Call,
        Episode,
        Extent,
        Round,
        args_digest,
    )
    from reviewlab.recording.capture._recorder import Recorder
    from reviewlab.recording.journal._reader import is_session_folder, read_session
    from reviewlab.recording.journal._writer import SessionJournal

_HOMES = {
    "Call": "reviewlab.recording._schema",
    "Episode": "reviewlab.recording._schema",
    "EpisodeFormatError": "reviewlab.recording._files",
    "Extent": "reviewlab.recording._schema",
    "FRAME_COLUMNS": "reviewlab.recording._files",
    "LoadedEpisodes": "reviewlab.recording._files",
    "Recorder": "reviewlab.recording.capture._recorder",
    "Round": "reviewlab.recording._schema",
    "SCHEMA_VERSION": "reviewlab.recording._schema",
    "SessionJournal": "reviewlab.recording.journal._writer",
    "SkippedLine": "reviewlab.recording._files",
    "args_digest": "reviewlab.recording._schema",
    "episodes_frame": "reviewlab.recording._files",
    "is_session_folder": "reviewlab.recording.journal._reader",
    "iter_episodes": "reviewlab.recording._files",
    "load_episodes": "reviewlab.recording._files",
    "read_session": "reviewlab.recording.journal._reader",
    "save_episodes": "reviewlab.recording._files",
}
"""Where each public name lives: imported on first use, so importing
``reviewlab.recording`` loads only what is asked for."""

__all__ = [
    "FRAME_COLUMNS",
    "SCHEMA_VERSION",
    "Call",
    "Episode",
    "EpisodeFormatError",
    "Extent",
    "LoadedEpisodes",
    "Recorder",
    "Round",
    "SessionJournal",
    "SkippedLine",
    "args_digest",
    "episodes_frame",
    "is_session_folder",
    "iter_episodes",
    "load_episodes",
    "read_session",
    "save_episodes",
]

__getattr__, __dir__ = lazy_names(__name__, _HOMES)

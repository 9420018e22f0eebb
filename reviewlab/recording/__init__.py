"""Recorded episodes: the ``reviewlab.episode/1`` and ``/2`` schema, files, frames, the recorder.

At the top: ``schema`` (the contract), ``files`` (load, save, iterate, the per-call frame; a
``.parquet`` path or a directory is the columnar form), ``file_errors``, ``locations`` (paths
and fsspec URLs) and ``ids`` (the episode-id rule). The families are sub-packages: ``jsonl``
(JSONL straight to columns), ``columnar`` (Parquet), ``synth`` (synthetic corpora and the
incident day), ``capture`` (live runs and bounded-tool calls as episodes) and ``interop``
(importers, the OTel exporter, format conversion), ``journal`` (a gateway's crash-safe
session files; a folder of them reads as a corpus).
"""

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
from reviewlab.recording._schema import SCHEMA_VERSION, Call, Episode, Extent, Round, args_digest
from reviewlab.recording.capture import Recorder
from reviewlab.recording.journal import SessionJournal, is_session_folder, read_session

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

"""Recorded episodes: the ``reviewlab.episode/1`` schema, files, frames and the recorder."""

from reviewlab.recording.capture import Recorder
from reviewlab.recording.files import (
    FRAME_COLUMNS,
    EpisodeFormatError,
    LoadedEpisodes,
    SkippedLine,
    episodes_frame,
    iter_episodes,
    load_episodes,
    save_episodes,
)
from reviewlab.recording.schema import SCHEMA_VERSION, Call, Episode, Extent, Round

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
    "SkippedLine",
    "episodes_frame",
    "iter_episodes",
    "load_episodes",
    "save_episodes",
]

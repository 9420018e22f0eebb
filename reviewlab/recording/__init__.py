"""Recorded episodes: the ``reviewlab.episode/1`` schema, files, frames and the recorder."""

from reviewlab.recording.schema import SCHEMA_VERSION, Call, Episode, Extent, Round

__all__ = ["SCHEMA_VERSION", "Call", "Episode", "Extent", "Round"]

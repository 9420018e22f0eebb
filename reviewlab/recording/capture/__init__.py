"""Capture: live runs and bounded-tool calls turned into recorded episodes.

:class:`Recorder` collects episodes as they really ran and writes them atomically;
:func:`episode_from_result` converts one live :class:`~reviewlab.live._episode.EpisodeResult`;
:func:`record_live` runs a model and records it; :class:`ToolCallLog` groups the calls of
bounded tools into episodes, with rounds inferred from call overlap (``_timeline``); token
usage is read in every spelling the sources use (:func:`token_counts`).
"""

from typing import TYPE_CHECKING

from reviewlab.core._lazy import lazy_names

if TYPE_CHECKING:
    from reviewlab.recording.capture._live import UsageTap, episode_from_result, record_live
    from reviewlab.recording.capture._recorder import Recorder
    from reviewlab.recording.capture._timeline import (
        OFFSETS_KEY,
        TimedCall,
        group_rounds,
        inferred_rounds,
        offsets_meta,
        read_offsets,
    )
    from reviewlab.recording.capture._tool_log import ToolCallLog, recorded_call
    from reviewlab.recording.capture._usage import token_counts

_HOMES = {
    "OFFSETS_KEY": "reviewlab.recording.capture._timeline",
    "Recorder": "reviewlab.recording.capture._recorder",
    "TimedCall": "reviewlab.recording.capture._timeline",
    "ToolCallLog": "reviewlab.recording.capture._tool_log",
    "UsageTap": "reviewlab.recording.capture._live",
    "episode_from_result": "reviewlab.recording.capture._live",
    "group_rounds": "reviewlab.recording.capture._timeline",
    "inferred_rounds": "reviewlab.recording.capture._timeline",
    "offsets_meta": "reviewlab.recording.capture._timeline",
    "read_offsets": "reviewlab.recording.capture._timeline",
    "record_live": "reviewlab.recording.capture._live",
    "recorded_call": "reviewlab.recording.capture._tool_log",
    "token_counts": "reviewlab.recording.capture._usage",
}
"""Where each public name lives: imported on first use, so importing
``reviewlab.recording.capture`` loads only what is asked for."""

__all__ = [
    "OFFSETS_KEY",
    "Recorder",
    "TimedCall",
    "ToolCallLog",
    "UsageTap",
    "episode_from_result",
    "group_rounds",
    "inferred_rounds",
    "offsets_meta",
    "read_offsets",
    "record_live",
    "recorded_call",
    "token_counts",
]

__getattr__, __dir__ = lazy_names(__name__, _HOMES)

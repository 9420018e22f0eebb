"""A corpus compiled once for the twin: plain tuples per episode and the static call columns.

Lifecycle: a :class:`TwinCorpus` is built from a list of episodes (every pydantic object read
once: the effective observation, the requested lines, the status) by the corpus handle that
keeps it (:meth:`~reviewlab.engines._corpus.Corpus.twin_compiled`), so the same episodes
replayed again reuse it.

Invariant: nothing here depends on a policy, a narrowing or the censored mode.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from reviewlab.engines._shared import check_corpus
from reviewlab.recording._schema import Episode

CallTuple = tuple[str, Any, float, bool, bool, int]
"""``(tool, args, duration_sec, completed, status_error, requested_lines)``, effective
observation."""


class EpisodeTuple(NamedTuple):
    """One episode as the replay loop reads it."""

    id: str
    slot: str
    deadline_sec: float | None
    first_row: int
    """Row of its first call in the corpus-order call columns."""
    rounds: tuple[tuple[float, tuple[CallTuple, ...]], ...]
    """``(send_sec, calls)`` per round."""


class TwinCorpus:
    """Per-episode tuples and the static call columns (corpus order, then call order) of one
    corpus.

    The tuples, ``duration_sec``, ``completed`` and ``requested_lines`` are built with the
    corpus (every replay reads them); the call frame's other static columns
    (``episode_id, round, call_index, tool``) on first use, so a replay read only for its
    summary never builds them.
    """

    def __init__(self, episodes: list[Episode]) -> None:
        check_corpus(episodes)
        self.episodes = list(episodes)
        """The episode objects themselves: keeps their ids from being reused while cached."""
        # Each call object is read once, in one pass (the objects are scattered in memory: every
        # extra pass over them costs another round of cache misses); the columns are filled as the
        # tuples are built.
        tuples: list[EpisodeTuple] = []
        durations: list[float] = []
        completions: list[bool] = []
        requested: list[int] = []
        round_sizes: list[int] = []
        episode_rounds: list[int] = []
        row = 0
        add_duration, add_completed = durations.append, completions.append
        add_requested, add_size = requested.append, round_sizes.append
        for episode in episodes:
            rounds = []
            for rnd in episode.rounds:
                # Inlined (this loop is most of a cold replay): the effective observation is
                # censoring.effective_observation's rule, the lines Call.requested_lines'
                # (tests/engines/test_vectorized.py compares with the engine that calls them).
                calls = []
                for call in rnd.calls:
                    returned = call.returned_after_sec
                    if returned is None:
                        duration, completed = call.duration_sec, call.completed
                    else:
                        duration, completed = returned, True
                    extent = call.extent
                    lines = 0 if extent is None else extent.end_line - extent.start_line + 1
                    calls.append(
                        (call.tool, call.args, duration, completed, call.status == "error", lines)
                    )
                    add_duration(duration)
                    add_completed(completed)
                    add_requested(lines)
                rounds.append((rnd.send_sec, tuple(calls)))
                add_size(len(calls))
            episode_rounds.append(len(rounds))
            tuples.append(
                EpisodeTuple(episode.id, episode.slot, episode.deadline_sec, row, tuple(rounds))
            )
            row = len(durations)
        self.duration_sec: list[float] = durations
        """Effective durations (a replay copies them and overwrites imputed ones)."""
        self.completed: list[bool] = completions
        self.tuples = tuples
        self.calls = row
        self.ids = [episode.id for episode in episodes]
        self.slots = [episode.slot for episode in episodes]
        self.requested_lines = np.array(requested, dtype=np.int64)
        self._round_sizes = np.array(round_sizes, dtype=np.int64)
        self._episode_rounds = np.array(episode_rounds, dtype=np.int64)
        self._frame_columns: tuple[Any, Any, np.ndarray, np.ndarray] | None = None
        self.recorded_arrivals: np.ndarray | None = None
        """Arrival times for ``arrivals="recorded"``, filled on first use."""

    def _static_columns(self) -> tuple[Any, Any, np.ndarray, np.ndarray]:
        """``(episode_id, tool, round, call_index)`` of the call frame, built once."""
        if self._frame_columns is None:
            sizes, per_episode = self._round_sizes, self._episode_rounds
            round_episode = np.repeat(np.arange(per_episode.size), per_episode)
            round_number = (
                np.arange(sizes.size) - (np.cumsum(per_episode) - per_episode)[round_episode]
            )
            owner = np.repeat(round_episode, sizes)
            counts = np.bincount(owner, minlength=per_episode.size)
            first_rows = np.cumsum(counts) - counts
            tools = [call[0] for ep in self.tuples for _, calls in ep.rounds for call in calls]
            # Arrow-backed string columns are immutable, so every frame may share these two.
            self._frame_columns = (
                pd.array(np.array(self.ids or [""], dtype=object)[owner], dtype="str"),
                pd.array(np.array(tools, dtype=object), dtype="str"),
                np.repeat(round_number + 1, sizes),
                np.arange(self.calls, dtype=np.int64) - first_rows[owner],
            )
        return self._frame_columns

    @property
    def episode_id(self) -> Any:
        """Per call, its episode's id (a pandas string array)."""
        return self._static_columns()[0]

    @property
    def tool(self) -> Any:
        """Per call, its tool (a pandas string array)."""
        return self._static_columns()[1]

    @property
    def round(self) -> np.ndarray:
        """Per call, its round number (1-based within its episode)."""
        return self._static_columns()[2]

    @property
    def call_index(self) -> np.ndarray:
        """Per call, its 0-based index within its episode."""
        return self._static_columns()[3]

"""The static layout a compiled corpus derives from its per-call columns, once.

Lifecycle: :class:`~reviewlab.engines.vectorized._compiled.CompiledCorpus` (built from episode
objects) and :func:`~reviewlab.engines.vectorized._columns.compile_columns` (from Arrow) both
end in :meth:`StaticLayout._compile_columns`, the one place the rest is derived: every event in
:class:`~reviewlab.engines.vectorized._layout.PrefixLayout` order with its static clock, the
wall times and round silences when every call waits its duration, the calls of episodes with a
deadline and their static time left, the calls grouped by policy key, and the pre-fix replay
(which no policy changes). docs/architecture.md, "The vectorized engine".

Invariants: clocks are accumulated as the twin accumulates them (one addition per event, in
order); every array is read-only once derived.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from reviewlab.core._crediting import Crediting
from reviewlab.engines.vectorized._evaluation import ERROR, EXECUTED, WITHHELD
from reviewlab.engines.vectorized._layout import PrefixLayout
from reviewlab.engines.vectorized._windows import RemoteCalls


@dataclass(frozen=True)
class CorpusEvents:
    """A corpus's events as compiling hands them over: per episode its count (``n_events``),
    each event's seconds in corpus order (a send, then its round's calls), per round with
    calls its size."""

    n_events: np.ndarray
    event_sec: np.ndarray
    round_sizes: np.ndarray


class StaticLayout:
    """What a compiled corpus derives from its columns (see the module docstring); the corpus's
    own fields read here are set by its constructor."""

    censored: str
    episode_ids: Sequence[str]
    arrival_sec: np.ndarray
    deadline_at_sec: np.ndarray
    key_args: list[Any]

    @property
    def calls(self) -> int:
        """How many calls the corpus holds."""
        return int(self.duration_sec.size)

    def _compile_columns(
        self,
        index_columns: list[np.ndarray],
        duration_sec: np.ndarray,
        completed: np.ndarray,
        status_error: np.ndarray,
        *,
        tools: list[str],
        key_tools: list[str],
        events: CorpusEvents,
        remote: RemoteCalls | None = None,
    ) -> None:
        """Everything else from the per-call columns (the rows of
        :meth:`~reviewlab.engines.vectorized._compiled.CompiledCorpus._compile`, or
        :func:`reviewlab.engines.vectorized._columns.compile_columns` straight from Arrow):
        ``index_columns`` = episode index, round, tool code, key code, event column,
        round-with-calls index, requested lines; ``events`` the episodes' events and rounds
        (handed over: its event seconds are freed once placed); ``remote`` what version 2
        calls recorded (progress times, cancel stop times), by call."""
        remote = remote if remote is not None else RemoteCalls()
        self.progress_calls = np.array(remote.progress_calls, dtype=np.intp)
        self.progress_sec: list[tuple[float, ...]] = remote.progress_sec
        self.honoured_calls = np.array(remote.honoured_calls, dtype=np.intp)
        self.honoured_sec = np.array(remote.honoured_sec, dtype=float)
        # Per-call indices as 4-byte integers while the corpus allows (memory: a few arrays of
        # every call are the bulk of a compiled corpus).
        index = np.int32 if max(duration_sec.size, events.event_sec.size) < 2**31 - 1 else np.intp
        narrow: list[Any] = [column.astype(index, copy=False) for column in index_columns]
        (
            self.episode_index,
            self.round,
            self.tool_code,
            self.key_code,
            self.call_column,
            self.call_round,
            self.requested_lines,
        ) = narrow
        self.duration_sec = duration_sec
        self.completed = completed
        self.status_error = status_error
        self.tools = tools
        self.key_tools = key_tools
        self.all_calls = np.ones(duration_sec.size, dtype=bool)
        round_sizes = events.round_sizes
        self._compile_events(events.n_events, events.event_sec)
        del events  # its event seconds are placed in event order (the caller keeps no reference)
        self._compile_rounds(round_sizes)
        self._compile_deadlines()
        # The reads are the calls whose recording gave them a read extent (crediting.py).
        self.read_calls = np.flatnonzero(self.requested_lines > 0).astype(self.episode_index.dtype)
        self.read_episode = self.episode_index[self.read_calls]
        self.read_requested = self.requested_lines[self.read_calls]
        self.read_error = self.status_error[self.read_calls]
        self.read_first = np.searchsorted(self.read_episode, np.arange(len(self.episode_ids) + 1))
        # The credits when nothing is abandoned; a replay redoes only the episodes with an abandoned
        # call.
        self.static_credited = Crediting.credited_lines_array(
            ~self.read_error,
            np.zeros(self.read_calls.size, dtype=bool),
            self.read_requested,
        )
        # Exact integer totals of the static replay (a sparse replay adds its changes to them).
        self.requested_total = int(self.read_requested.sum())
        self.credited_total = int(self.static_credited.sum())
        self.timeout_lost_total = int(
            np.where(~self.read_error, self.read_requested - self.static_credited, 0).sum()
        )
        self._compile_keys()
        self._compile_unbounded()
        for value in vars(self).values():
            if isinstance(value, np.ndarray):
                value.flags.writeable = False

    KEY_TOP = 0.05
    """The share of each key's calls, those of the highest thresholds, kept sorted."""

    def _compile_keys(self) -> None:
        """Calls grouped by key, the :data:`KEY_TOP` share of each group with the highest
        thresholds (the duration, infinite for a censored call) last and sorted: a static
        bound at or above the lowest of them abandons a suffix of its group, found by one
        binary search (:func:`reviewlab.engines.vectorized._settle._static_hits`); a lower
        bound, a scan of the group. ``key_sorted[k]``: where group ``k``'s sorted part
        starts; every threshold before it is at most the one there."""
        threshold = np.where(self.completed, self.duration_sec, np.inf)
        n_keys = len(self.key_args)
        narrow = self.key_code.astype(np.int16) if n_keys < 2**15 else self.key_code
        order = np.argsort(narrow, kind="stable")
        counts = np.bincount(self.key_code, minlength=n_keys)
        self.key_offsets = offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.intp)
        self.key_sorted = offsets[1:].copy()
        for key, (low, high) in enumerate(
            zip(offsets[:-1].tolist(), offsets[1:].tolist(), strict=True)
        ):
            size = high - low
            if size < 2:
                self.key_sorted[key] = low
                continue
            group = order[low:high]
            values = threshold[group]
            cut = size - max(64, int(size * self.KEY_TOP)) if size > 256 else 0
            if cut > 0:
                parted = np.argpartition(values, cut)
                group, values = group[parted], values[parted]
            top = cut + np.argsort(values[cut:])
            order[low + cut : high] = group[top]
            order[low : low + cut] = group[:cut]
            self.key_sorted[key] = low + cut
        self.key_calls = order.astype(np.int32 if order.size < 2**31 else np.intp)
        self.key_threshold = threshold[order]

    def _compile_events(self, n_events: np.ndarray, event_sec: np.ndarray) -> None:
        """Every event in :class:`PrefixLayout` order; a send has key ``len(key_args)`` (never
        bounded)."""
        self.events = events = PrefixLayout.of(n_events)
        n = events.size
        self.spare = n
        self.offsets = np.asarray(events.offsets, dtype=np.intp)
        self.event_count = n_events[events.order]  # per sorted row
        self.arrival_sorted = self.arrival_sec[events.order]
        self.deadline_at_sorted = self.deadline_at_sec[events.order]
        self.call_row = events.rank[self.episode_index]
        call_event = self.offsets[self.call_column] + self.call_row
        self.event_duration = np.zeros(n + 1)
        # Column by column: event j of each sorted row, gathered from the corpus-order events.
        first = (np.cumsum(n_events) - n_events)[events.order]
        for j, active in enumerate(events.active):
            start = events.offsets[j]
            self.event_duration[start : start + active] = event_sec[first[:active] + j]
        del first
        index = self.episode_index.dtype
        self.call_row = self.call_row.astype(index)
        self.event_call = np.full(n + 1, -1, dtype=index)
        self.event_call[call_event] = np.arange(call_event.size)
        del call_event
        clock = events.running_sums(self.arrival_sorted, self.event_duration)
        self.static_wall = self._wall(clock)
        # The time left at every deadline call on the static clock (a send precedes a call).
        dl = np.flatnonzero(~np.isnan(self.deadline_at_sec[self.episode_index]))
        before = clock[self.offsets[self.call_column[dl] - 1] + self.call_row[dl]]
        self._dl_static_clock = before

    def _wall(self, clock: np.ndarray) -> np.ndarray:
        """Wall time per episode (corpus order): the clock after its last event minus its
        arrival."""
        rows = self.events.active[0] if self.events.active else 0
        last = self.offsets[self.event_count[:rows] - 1] + np.arange(rows)
        wall = np.zeros(self.arrival_sec.size)
        wall[self.events.order[:rows]] = clock[last] - self.arrival_sorted[:rows]
        return wall

    def _compile_rounds(self, sizes: np.ndarray) -> None:
        """Rounds with calls (corpus order): where their calls are, and their silences when waits
        are durations."""
        starts = np.cumsum(sizes) - sizes
        index = self.episode_index.dtype
        self.round_size = sizes.astype(index)
        self.round_row = self.call_row[starts]
        self.round_column = self.call_column[starts]
        self.silence_episodes, self.silence_starts = np.unique(
            self.episode_index[starts], return_index=True
        )
        self.rounds = rounds = PrefixLayout.of(sizes)
        self.round_call = np.empty(rounds.size, dtype=index)
        first = starts[rounds.order]  # column by column: call j of each sorted round
        for j, active in enumerate(rounds.active):
            self.round_call[rounds.offsets[j] : rounds.offsets[j] + active] = first[:active] + j
        del first
        self.static_silence = self.round_silence(self.duration_sec)

    def round_silence(self, wait: np.ndarray) -> np.ndarray:
        """Every round's silence (rounds with calls, corpus order): its calls' waits added in call
        order."""
        waits = wait[self.round_call]
        silence = np.zeros(self.rounds.order.size)
        for j, n in enumerate(self.rounds.active):
            silence[:n] += waits[
                self.rounds.offsets[j] : self.rounds.offsets[j] + n
            ]  # 0.0 + w is w
        return silence[self.rounds.rank]

    def _compile_deadlines(self) -> None:
        """The calls of episodes with a deadline, and the time each has left on the static clock."""
        has_deadline = ~np.isnan(self.deadline_at_sec)
        dl = np.flatnonzero(has_deadline[self.episode_index])
        self.dl_calls = dl
        # Per episode with a deadline, where its calls start in dl_calls (its call i is at + i).
        per_episode = np.bincount(self.episode_index[dl], minlength=has_deadline.size)
        self.dl_start = np.cumsum(per_episode) - per_episode
        self.dl_row = self.call_row[dl]
        self.dl_key = self.key_code[dl]
        self.dl_duration = self.duration_sec[dl]
        self.dl_completed = self.completed[dl]
        # The twin's max(0.0, deadline_at - t), with the static t.
        self.dl_remaining = np.maximum(
            0.0, self.deadline_at_sorted[self.dl_row] - self._dl_static_clock
        )
        del self._dl_static_clock

    def _compile_unbounded(self) -> None:
        """The pre-fix replay, which no policy changes: under "wedge" a censored call ends its
        episode."""
        wedge = np.zeros(self.calls, dtype=bool)
        withheld = np.zeros(self.calls, dtype=bool)
        if self.censored == "wedge":
            ends_at = self._wedge_columns()[self.episode_index]
            wedge = ~self.completed & (self.call_column == ends_at)
            withheld = self.call_column > ends_at
        self.unbounded_wedge = wedge
        self.unbounded_dispatched = ~withheld
        self.unbounded_outcome = np.where(
            withheld, WITHHELD, np.where(wedge | self.status_error, ERROR, EXECUTED)
        ).astype(np.int8)
        clock = self.events.running_sums(self.arrival_sorted, self._unbounded_event_waits())
        self.unbounded_wall = self._wall(clock)
        del clock
        self.unbounded_silence = self.round_silence(self._unbounded_call_waits())

    def _wedge_columns(self) -> np.ndarray:
        """Per episode, the event column of its first censored call (a large number: none)."""
        censored = np.flatnonzero(~self.completed)
        first = np.full(len(self.episode_ids), np.iinfo(np.intp).max, dtype=np.intp)
        np.minimum.at(first, self.episode_index[censored], self.call_column[censored])
        return first

    def _unbounded_event_waits(self) -> np.ndarray:
        """Every event's wait in the pre-fix replay (layout order, with the spare slot)."""
        wait = self.event_duration.copy()
        if self.censored == "wedge":
            # The wedge is waited on forever; the episode's later sends and calls never happen
            # (they take no time after it: the clock is already infinite).
            ends_sorted = self._wedge_columns()[self.events.order]
            for j, n in enumerate(self.events.active):
                rows = np.flatnonzero(ends_sorted[:n] <= j)
                at = self.offsets[j] + rows
                wait[at] = np.where(ends_sorted[rows] == j, np.inf, 0.0)
        return wait

    def _unbounded_call_waits(self) -> np.ndarray:
        """Per call, its wait in the pre-fix replay: 0 withheld, ``inf`` the wedge, else its
        duration."""
        return np.where(
            ~self.unbounded_dispatched,
            0.0,
            np.where(self.unbounded_wedge, np.inf, self.duration_sec),
        )

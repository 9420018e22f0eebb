"""The compiled corpus: a corpus as columns, built once and replayed under many policies.

Lifecycle: :func:`~reviewlab.engines.vectorized.compile_corpus` builds a :class:`CompiledCorpus`
(the static replay, in which every call waits its duration, the pre-fix replay and the layouts
the settling needs); :meth:`CompiledCorpus.evaluate` replays it under one
:class:`~reviewlab.core._policy.Policy` (:mod:`reviewlab.engines.vectorized._settle`), as often as a
sweep likes; :meth:`~CompiledCorpus.summary` stops at the summary and
:meth:`~CompiledCorpus.result` adds the frames (:mod:`reviewlab.engines.vectorized._frames`).
Invariant: nothing here changes once compiled but the caches built on first use (deadline
windows per narrowing, scratch arrays, string columns), each behind its lock.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from reviewlab.core._crediting import Crediting
from reviewlab.core._policy import Narrowing, Policy, SupportsTimeoutFor, TimeoutPolicy
from reviewlab.core._vocab import CENSORING_MODES
from reviewlab.engines._censoring import completion_times, effective_observation
from reviewlab.engines._honours import COMPILED
from reviewlab.engines._result import FramesOnDemand, ReplayResult
from reviewlab.engines._shared import check_corpus
from reviewlab.engines.vectorized._evaluation import ERROR, EXECUTED, WITHHELD, Evaluation
from reviewlab.engines.vectorized._frames import frames, tool_breakdown, unbounded_evaluation
from reviewlab.engines.vectorized._layout import PrefixLayout
from reviewlab.engines.vectorized._settle import evaluate_bounded
from reviewlab.engines.vectorized._windows import DeadlineWindows, RemoteCalls
from reviewlab.recording._schema import Episode

_SCRATCH: weakref.WeakKeyDictionary[Any, list[np.ndarray]] = weakref.WeakKeyDictionary()
"""Per corpus, its free scratch arrays (one per summary running at once, kept between
replays)."""
_SCRATCH_LOCK = threading.Lock()
_WINDOWS_LOCK = threading.Lock()


@dataclass(frozen=True)
class CorpusEvents:
    """A corpus's events as compiling hands them over: per episode its count (``n_events``),
    each event's seconds in corpus order (a send, then its round's calls), per round with
    calls its size."""

    n_events: np.ndarray
    event_sec: np.ndarray
    round_sizes: np.ndarray


class CompiledCorpus:
    """A corpus as columns, built once by :func:`compile_corpus` and replayed under many policies.

    Per call (corpus order: episode order, then call order): ``episode_index,
    call_index, round, tool_names, duration_sec, completed`` (effective: after
    ``returned_after_sec`` and imputation), ``status_error, requested_lines``,
    ``key_code`` (into ``key_tools``/``key_args``). Per episode: ``arrival_sec``,
    ``deadline_at_sec`` (``arrival + deadline_sec``, NaN without one). The
    ``event_*`` arrays hold every event (send or call) in :attr:`events` order
    plus one spare slot, a zero-length send, that pads the settling blocks.
    The ``static_*`` arrays are the replay in which every call waits its
    duration; the ``unbounded_*`` ones the pre-fix replay, which no policy
    changes (its clock before every call and its waits are kept for the
    frames' :data:`~reviewlab.core._metrics.CALL_TIMING_COLUMNS`). What version 2
    calls add is kept sparse, by call: ``progress_calls``/``progress_sec`` (recorded
    progress times, for idle timeouts) and ``honoured_calls``/``honoured_sec`` (how
    long after a cancel the server stopped). Everything here is read-only once compiled.
    """

    def __init__(
        self, episodes: Sequence[Episode], *, censored: str = "wedge", seed: int = 0
    ) -> None:
        if censored not in CENSORING_MODES:
            raise ValueError(
                f"censored: expected one of {', '.join(CENSORING_MODES)}, got {censored!r}"
            )
        self.censored = censored
        self.seed = seed
        check_corpus(
            list(episodes)
        )  # Episode objects with distinct ids: the twin's rule and messages
        self.episode_ids: Sequence[str] = [ep.id for ep in episodes]
        self.slot_ids: Sequence[str] = [ep.slot for ep in episodes]
        imputed = completion_times(episodes, censored, seed) or {}
        first = min((ep.started_at for ep in episodes), default=None)
        arrival = (
            [(ep.started_at - first).total_seconds() for ep in episodes]
            if first is not None
            else []
        )
        self.arrival_sec = np.array(arrival, dtype=float)
        self.deadline_at_sec = np.array(
            [
                np.nan if ep.deadline_sec is None else arr + ep.deadline_sec
                for ep, arr in zip(episodes, arrival, strict=True)
            ],
            dtype=float,
        )
        self._compile(episodes, imputed)
        self._string_columns: tuple[Any, Any] | None = None

    @property
    def calls(self) -> int:
        """How many calls the corpus holds."""
        return int(self.duration_sec.size)

    def _cached(self, name: str, build: Any) -> np.ndarray:
        """A per-call array built on first use and kept (read-only)."""
        value = self.__dict__.get(name)
        if value is None:
            value = build()
            value.flags.writeable = False
            self.__dict__[name] = value
        return value  # type: ignore[no-any-return]

    @property
    def call_index(self) -> np.ndarray:
        """Per call, its 0-based index within its episode (its event column less its round's
        sends)."""
        return self.call_column.astype(np.intp) - self.round

    @property
    def tool_names(self) -> np.ndarray:
        """Per call, its tool's name (built on first use: only custom policies, idle timeouts and
        frames read it)."""
        return self._cached(
            "_tool_names", lambda: np.array(self.tools or [""], dtype=object)[self.tool_code]
        )

    def walls_with(self, changed: np.ndarray, walls: np.ndarray) -> np.ndarray:
        """Per episode, its wall time when the episodes ``changed`` (corpus positions) have
        ``walls`` and every other keeps its static one (the static array itself if none
        changed)."""
        if not changed.size:
            return self.static_wall
        wall = self.static_wall.copy()
        wall[changed] = walls
        return wall

    @property
    def static_wall_sorted(self) -> np.ndarray:
        """The static wall times, sorted (built on first use: a sparse replay's summary reads
        its quantiles from them and its changes,
        :class:`~reviewlab.core._quantiles.ReplacedValues`)."""
        return self._cached("_static_wall_sorted", lambda: np.sort(self.static_wall))

    @property
    def static_clock_before(self) -> np.ndarray:
        """Per call, its episode's clock at dispatch when every call waits its duration (built on
        first use, for the frames)."""
        return self._cached("_static_clock_before", lambda: self._clock_before(self.event_duration))

    @property
    def unbounded_clock_before(self) -> np.ndarray:
        """Per call, its episode's clock at dispatch in the pre-fix replay (frames only)."""
        return self._cached(
            "_unbounded_clock_before", lambda: self._clock_before(self._unbounded_event_waits())
        )

    @property
    def unbounded_wait(self) -> np.ndarray:
        """Per call, what the pre-fix replay waited on it (frames only)."""
        return self._cached("_unbounded_wait", self._unbounded_call_waits)

    def _clock_before(self, event_waits: np.ndarray) -> np.ndarray:
        """Per call, the clock before it (a send precedes every call) given every event's wait."""
        clock = self.events.running_sums(self.arrival_sorted, event_waits)
        return clock[self.offsets[self.call_column - 1] + self.call_row]

    # -- compilation -------------------------------------------------------
    def _compile(self, episodes: Sequence[Episode], imputed: dict[tuple[str, int], float]) -> None:
        tools: dict[str, int] = {}
        keys: dict[tuple[str, Any], int] = {}
        self.key_args: list[Any] = []
        self.call_args: list[Any] = []
        no_args = TimeoutPolicy.args_key({})
        rows: list[tuple[Any, ...]] = []
        event_sec: list[float] = []  # corpus event order: a send's or a call's seconds
        n_events: list[int] = []
        round_sizes: list[int] = []
        remote = RemoteCalls()
        for e, ep in enumerate(episodes):
            m = index = 0
            for r, rnd in enumerate(ep.rounds, start=1):
                event_sec.append(rnd.send_sec)
                m += 1
                for call in rnd.calls:
                    duration, completed = effective_observation(call)
                    if not completed and (ep.id, index) in imputed:
                        duration, completed = imputed[(ep.id, index)], True
                    args = call.args
                    tool = tools.setdefault(call.tool, len(tools))
                    key = keys.setdefault(
                        (call.tool, TimeoutPolicy.args_key(args) if args else no_args), len(keys)
                    )
                    if key == len(self.key_args):
                        self.key_args.append(args)
                    rows.append(
                        (
                            e,
                            r,
                            tool,
                            key,
                            m,
                            len(round_sizes),
                            call.requested_lines,
                            duration,
                            completed,
                            call.status == "error",
                        )
                    )
                    self.call_args.append(args)
                    if call.progress_sec is not None or call.cancel_honoured_sec is not None:
                        remote.add(len(rows) - 1, call.progress_sec, call.cancel_honoured_sec)
                    event_sec.append(duration)
                    index += 1
                    m += 1
                if rnd.calls:
                    round_sizes.append(len(rnd.calls))
            n_events.append(m)
        columns: list[Any] = list(zip(*rows, strict=True)) if rows else [()] * 10
        self._compile_columns(
            [np.array(c, dtype=np.intp) for c in columns[:7]],
            np.array(columns[7], dtype=float),
            np.array(columns[8], dtype=bool),
            np.array(columns[9], dtype=bool),
            tools=list(tools),
            key_tools=[tool for tool, _ in keys],
            events=CorpusEvents(
                np.array(n_events, dtype=np.intp),
                np.array(event_sec, dtype=float),
                np.array(round_sizes, dtype=np.intp),
            ),
            remote=remote,
        )

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
        """Everything else from the per-call columns (the rows of :meth:`_compile`, or
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

    def deadline_windows(self, narrowing: Narrowing) -> DeadlineWindows:
        """The :class:`DeadlineWindows` of ``narrowing`` (built on first use; the last two
        narrowings are kept)."""
        key = (narrowing.mode, narrowing.reserve_sec, narrowing.fraction)
        with _WINDOWS_LOCK:  # replays of one corpus may run on several threads (sweep)
            cache = self.__dict__.setdefault("_windows", OrderedDict())
            windows = cache.get(key)
            if windows is None:
                windows = cache[key] = DeadlineWindows.of(self, narrowing)
                while len(cache) > 2:
                    cache.popitem(last=False)
            cache.move_to_end(key)
        return windows  # type: ignore[no-any-return]

    def zombie_scratch(self) -> np.ndarray:
        """A writable array of zeros, one per call, that a summary fills and clears again
        (:meth:`Evaluation.summary`); each summary running at the same time gets its own.
        Hand it back with :meth:`release_scratch`. Kept beside the corpus, not in it (a
        scattered corpus pickles without it)."""
        with _SCRATCH_LOCK:
            free = _SCRATCH.setdefault(self, [])
            if free:
                return free.pop()
        return np.zeros(self.calls)

    def release_scratch(self, scratch: np.ndarray) -> None:
        """Hand ``scratch`` back (all zeros again) for the next summary."""
        with _SCRATCH_LOCK:
            _SCRATCH.setdefault(self, []).append(scratch)

    def longest_silences(self, k: int) -> np.ndarray:
        """At least ``k`` rounds (all if fewer) with the longest static silences, longest first.

        Kept across replays and grown fourfold when a replay asks for more (a sweep's replays
        change a few thousand rounds each: the list stays short)."""
        top = self.__dict__.get("_longest_silences")
        if top is None or (top.size < k and top.size < self.static_silence.size):
            silence = self.static_silence
            size = max(k, 4 * (0 if top is None else top.size), 4096)
            if size >= silence.size:
                top = np.argsort(-silence, kind="stable")
            else:
                top = np.argpartition(-silence, size)[:size]
                top = top[np.argsort(-silence[top], kind="stable")]
            top.flags.writeable = False
            self.__dict__["_longest_silences"] = top
        return top  # type: ignore[no-any-return]

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

    def string_columns(self) -> tuple[Any, Any]:
        """Per call, its episode id and its tool as pandas string arrays (built once: immutable,
        so every frame may share them; the twin's dtype)."""
        if self._string_columns is None:
            ids = np.array(self.episode_ids or [""], dtype=object)[self.episode_index]
            self._string_columns = (
                pd.array(ids, dtype="str"),
                pd.array(self.tool_names, dtype="str"),
            )
        return self._string_columns

    # -- evaluation --------------------------------------------------------
    def evaluate(
        self,
        policy: Policy | SupportsTimeoutFor | None = None,
        narrowing: Narrowing | None = None,
    ) -> Evaluation:
        """Replay the corpus under ``policy`` (:meth:`Policy.of` with ``narrowing``; defaults as
        :func:`reviewlab.engines._replay.replay`).

        A bounded narrowing goes through
        :func:`reviewlab.engines.vectorized._settle.evaluate_bounded`;
        ``Narrowing.unbounded()`` reads the precompiled pre-fix replay. A compiled corpus
        replays calls only: hedges (second attempts need the episodes, :func:`replay_vectorized`)
        and a breaker (withheld calls: :func:`reviewlab.replay`) are refused by name.
        """
        spine = Policy.of(policy, narrowing)
        COMPILED.check(spine)  # calls only: hedges and a breaker need the episodes
        if spine.narrowing.mode == "unbounded":
            return unbounded_evaluation(self)
        return evaluate_bounded(self, spine)

    # -- results -----------------------------------------------------------
    def summary(
        self,
        policy: Policy | SupportsTimeoutFor | None = None,
        narrowing: Narrowing | None = None,
    ) -> dict[str, Any]:
        """:func:`reviewlab.core._metrics.summarize` of a replay, without building frames (for
        sweeps)."""
        return self.evaluate(policy, narrowing).summary()

    def summarize(self, ev: Evaluation) -> dict[str, Any]:
        """The summary of an :class:`Evaluation` of this corpus."""
        return ev.summary()

    def result(
        self,
        policy: Policy | SupportsTimeoutFor | None = None,
        narrowing: Narrowing | None = None,
    ) -> ReplayResult:
        """The full :class:`~reviewlab.engines._replay.ReplayResult` (frames and summary) of one
        replay."""
        spine = Policy.of(policy, narrowing)
        ev = self.evaluate(spine)
        assumptions = {"reaction": "as_recorded", "censored": self.censored, "seed": self.seed}
        return FramesOnDemand(
            lambda: frames(self, ev, spine, assumptions),
            summary=ev.summary(),
            engine="vectorized",
            policy=spine,
            assumptions=assumptions,
            per_tool=lambda: tool_breakdown(self, ev),
        )

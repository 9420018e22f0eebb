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
from typing import Any

import numpy as np
import pandas as pd

from reviewlab.core._policy import Narrowing, Policy, SupportsTimeoutFor, TimeoutPolicy
from reviewlab.core._vocab import CENSORING_MODES, DEFAULT_CENSORING
from reviewlab.engines._censoring import completion_times, effective_observation
from reviewlab.engines._honours import COMPILED
from reviewlab.engines._result import FramesOnDemand, ReplayResult
from reviewlab.engines._shared import check_corpus
from reviewlab.engines.vectorized._evaluation import Evaluation
from reviewlab.engines.vectorized._frames import frames, tool_breakdown, unbounded_evaluation
from reviewlab.engines.vectorized._settle import evaluate_bounded
from reviewlab.engines.vectorized._static import CorpusEvents, StaticLayout
from reviewlab.engines.vectorized._windows import DeadlineWindows, RemoteCalls
from reviewlab.recording._schema import Episode

_SCRATCH: weakref.WeakKeyDictionary[Any, list[np.ndarray]] = weakref.WeakKeyDictionary()
"""Per corpus, its free scratch arrays (one per summary running at once, kept between
replays)."""
_SCRATCH_LOCK = threading.Lock()
_WINDOWS_LOCK = threading.Lock()


class CompiledCorpus(StaticLayout):
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
        self, episodes: Sequence[Episode], *, censored: str = DEFAULT_CENSORING, seed: int = 0
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

"""Vectorized replay: NumPy over every call of every episode at once (no reviewer pool).

Lifecycle: :func:`compile_corpus` turns a corpus into a :class:`CompiledCorpus`
once (columnar arrays: episode, position, tool, effective duration, send times,
deadlines…); :meth:`CompiledCorpus.evaluate` then replays it under one policy
and narrowing, as often as a sweep likes, without touching a Python object per
call. :func:`replay_vectorized` is the ``engine="vectorized"`` entry of
:func:`reviewlab.replay.replay` and returns the same frames as the twin.

Invariants (the contract with the twin, briefing "Replay semantics"):

* Times are accumulated exactly like the twin's virtual clock: ``t = arrival``,
  then ``t += send``, ``t += wait`` in event order, so every float (remaining
  time, deadline-narrowed bound, wall time) is bit-identical to the twin's.
* Bounds come from the shared rules only: the per-tool timeout is resolved by
  :func:`~reviewlab.policy.resolve_bound` once per distinct
  ``(tool, TimeoutPolicy.args_key(args))``; the deadline clamp and the
  narrowing are :meth:`TimeoutPolicy.clamp_array` and
  :meth:`Narrowing.narrow_array`; the call fate is
  :func:`~reviewlab.receipts.abandons_array`; crediting is
  :meth:`Crediting.credited_lines_array`.
* Only episodes whose bounds can depend on the clock (an inherited deadline
  under a narrowing that reads it, or a clamped tool) are stepped call position
  by call position; all others are evaluated in one flat pass.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from reviewlab import metrics
from reviewlab.policy import Narrowing, SupportsTimeoutFor, TimeoutPolicy, resolve_bound
from reviewlab.receipts import (
    SOURCE_GAP_ABANDONED,
    SOURCE_GAP_WEDGED,
    Crediting,
    abandons,
    abandons_array,
)
from reviewlab.recording.schema import Episode
from reviewlab.replay import ReplayResult
from reviewlab.twin.impute import effective_observation, impute_durations

__all__ = ["CompiledCorpus", "Evaluation", "compile_corpus", "replay_vectorized"]

OUTCOMES = np.array(["executed", "error", "withheld"], dtype=object)
EXECUTED, ERROR, WITHHELD = 0, 1, 2
GAPS = np.array(["", SOURCE_GAP_ABANDONED, SOURCE_GAP_WEDGED], dtype=object)
_NO_TIMEOUT = Narrowing("none")  # resolves the bare tool timeout through resolve_bound's validation
_READS_CLOCK = ("inherit", "reserve", "fraction")


@dataclass
class Evaluation:
    """Per-call (corpus order) and per-episode arrays of one replay; frames are built only on demand."""

    bound_sec: np.ndarray  # NaN: unbounded or never started
    by_deadline: np.ndarray
    outcome: np.ndarray  # codes into OUTCOMES
    gap: np.ndarray  # codes into GAPS
    credited_lines: np.ndarray
    zombie_sec: np.ndarray
    wall_sec: np.ndarray
    max_silence_sec: np.ndarray
    peak_loose_workers: int
    unbounded: bool


@dataclass(frozen=True)
class PrefixLayout:
    """Rows of unequal length stored column by column, longest rows first, without padding.

    Column ``j`` holds the ``active[j]`` rows that have a ``j``-th item, as the
    contiguous slab ``offsets[j] : offsets[j] + active[j]``; because rows are
    sorted by length, those are always the first ``active[j]`` sorted rows, so a
    running per-row value is updated by ``value[:active[j]] += slab`` with views
    only. ``order[i]`` is the original row of sorted row ``i``.
    """

    order: np.ndarray
    rank: np.ndarray
    active: tuple[int, ...]
    offsets: tuple[int, ...]

    @classmethod
    def of(cls, lengths: np.ndarray) -> PrefixLayout:
        lengths = np.asarray(lengths, dtype=np.int64)
        order = np.argsort(-lengths, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        depth = int(lengths.max(initial=0))
        counts = np.bincount(lengths, minlength=depth + 1)
        active = (lengths.size - np.cumsum(counts))[:depth]  # rows longer than j
        offsets = np.concatenate([[0], np.cumsum(active)])
        return cls(order, rank, tuple(active.tolist()), tuple(offsets.tolist()))

    def position(self, rows: np.ndarray, columns: np.ndarray) -> np.ndarray:
        """Slab position of item ``columns`` of original row ``rows``."""
        return np.asarray(self.offsets, dtype=np.int64)[columns] + self.rank[rows]

    @property
    def size(self) -> int:
        return self.offsets[-1] if self.offsets else 0

    def slabs(self) -> Iterator[tuple[int, slice]]:
        """``(active rows, slab)`` per column."""
        for j, n in enumerate(self.active):
            yield n, slice(self.offsets[j], self.offsets[j] + n)


class CompiledCorpus:
    """A corpus as columns, built once by :func:`compile_corpus` and replayed under many policies.

    Per call (length :attr:`calls`, corpus order: episode order, then call
    order): ``episode_index, call_index, round, tool_code, key_code,
    duration_sec, completed`` (effective: after ``returned_after_sec`` and
    imputation), ``status_error, requested_lines, credits_tool``. Per episode:
    ``arrival_sec``, ``deadline_at_sec`` (``arrival + deadline_sec``, NaN
    without one). Three :class:`PrefixLayout` views drive the sequential parts:
    every episode's events (model sends and call waits, for wall times and
    dispatch times), the calls of episodes with a deadline (stepping the bounds
    that read the clock), and the calls of every round (round silences).
    """

    def __init__(self, episodes: Sequence[Episode], *, censored: str = "wedge", seed: int = 0) -> None:
        if censored not in ("wedge", "impute"):
            raise ValueError(f"censored: expected 'wedge' or 'impute', got {censored!r}")
        self.censored = censored
        self.seed = seed
        self.episode_ids = [ep.id for ep in episodes]
        seen: dict[str, int] = {}
        for position, ep in enumerate(episodes):
            if not isinstance(ep, Episode):
                raise TypeError(f"episodes[{position}]: expected a reviewlab Episode, got {type(ep).__name__}")
            if ep.id in seen:
                raise ValueError(f"episodes[{position}].id: {ep.id!r} repeats episodes[{seen[ep.id]}].id")
            seen[ep.id] = position
        imputed = impute_durations(episodes, seed) if censored == "impute" else {}
        self.slot_ids = [ep.slot for ep in episodes]
        first = min((ep.started_at for ep in episodes), default=None)
        arrival = [(ep.started_at - first).total_seconds() for ep in episodes] if first is not None else []
        self.arrival_sec = np.array(arrival, dtype=float)
        self.deadline_at_sec = np.array(
            [np.nan if ep.deadline_sec is None else arr + ep.deadline_sec
             for ep, arr in zip(episodes, arrival, strict=True)], dtype=float)
        self._compile_calls(episodes, imputed)

    # -- compilation -------------------------------------------------------
    def _compile_calls(self, episodes: Sequence[Episode], imputed: dict[tuple[str, int], float]) -> None:
        tools: dict[str, int] = {}
        keys: dict[tuple[str, Any], int] = {}
        self.key_args: list[dict[str, Any]] = []
        self.call_args: list[dict[str, Any]] = []
        rows: list[tuple[Any, ...]] = []
        send_rows: list[tuple[int, int, float]] = []  # (episode, event, seconds)
        sends_before: list[list[float]] = []  # per call: the sends since the previous call
        round_sizes: list[int] = []
        round_episode: list[int] = []
        n_events = np.zeros(len(episodes), dtype=np.int64)
        for e, ep in enumerate(episodes):
            m = index = 0
            pending: list[float] = []
            for r, rnd in enumerate(ep.rounds, start=1):
                send_rows.append((e, m, rnd.send_sec))
                pending.append(rnd.send_sec)
                m += 1
                for call in rnd.calls:
                    duration, completed = effective_observation(call)
                    if not completed and (ep.id, index) in imputed:
                        duration, completed = imputed[(ep.id, index)], True
                    tool = tools.setdefault(call.tool, len(tools))
                    key = keys.setdefault((call.tool, TimeoutPolicy.args_key(call.args)), len(keys))
                    if key == len(self.key_args):
                        self.key_args.append(call.args)
                    rows.append((e, index, r, tool, key, m, call.requested_lines, call.duration_sec,
                                 duration, completed, call.status == "error"))
                    self.call_args.append(call.args)
                    sends_before.append(pending)
                    pending = []
                    index += 1
                    m += 1
                if rnd.calls:
                    round_sizes.append(len(rnd.calls))
                    round_episode.append(e)
            n_events[e] = m
        columns = list(zip(*rows, strict=True)) if rows else [()] * 11
        ints = [np.array(c, dtype=np.int64) for c in columns[:7]]
        (self.episode_index, self.call_index, self.round, self.tool_code, self.key_code,
         self.event, self.requested_lines) = ints
        self.recorded_duration_sec = np.array(columns[7], dtype=float)
        self.duration_sec = np.array(columns[8], dtype=float)
        self.completed = np.array(columns[9], dtype=bool)
        self.status_error = np.array(columns[10], dtype=bool)
        self.tools = list(tools)
        self.key_tools = [tool for tool, _ in keys]
        credits = np.array([Crediting.credits_tool(t) for t in self.tools] or [False], dtype=bool)
        self.credits_tool = credits[self.tool_code]
        self.tool_names = np.array(self.tools or [""], dtype=object)[self.tool_code]
        n_calls = np.bincount(self.episode_index, minlength=len(self.episode_ids))
        self.first_call = (np.cumsum(n_calls) - n_calls)[self.episode_index]
        self.has_deadline = ~np.isnan(self.deadline_at_sec)
        self.no_deadline = np.full(self.calls, np.nan)
        self._compile_events(n_events, send_rows)
        self._compile_stepping(n_calls, sends_before)
        self._compile_rounds(np.array(round_sizes, dtype=np.int64), np.array(round_episode, dtype=np.int64))

    def _compile_events(self, n_events: np.ndarray, send_rows: list[tuple[int, int, float]]) -> None:
        """The event timeline; under the pre-fix policy the first still-censored call wedges its episode."""
        self.events = PrefixLayout.of(n_events)
        self.call_event = self.events.position(self.episode_index, self.event)
        self.sends = np.zeros(self.events.size)
        send_e = np.array([s[0] for s in send_rows], dtype=np.int64)
        send_m = np.array([s[1] for s in send_rows], dtype=np.int64)
        self.sends[self.events.position(send_e, send_m)] = [s[2] for s in send_rows]
        censored = ~self.completed
        before = self._earlier_in_episode(censored)
        self.wedge = censored & (before == 0)
        self.after_wedge = before > 0
        # A wedged episode ends after the wedge: its later sends never happen.
        wedge_at = np.full(len(self.episode_ids), np.iinfo(np.int64).max)
        wedge_at[self.episode_index[self.wedge]] = self.event[self.wedge]
        self.sends_wedged = self.sends.copy()
        self.sends_wedged[self.events.position(send_e, send_m)[send_m > wedge_at[send_e]]] = 0.0

    def _compile_stepping(self, n_calls: np.ndarray, sends_before: list[list[float]]) -> None:
        """Calls of episodes with a deadline, for the bounds that read the clock."""
        rows = np.flatnonzero(self.has_deadline)
        self.step_rows = rows
        self.steps = PrefixLayout.of(n_calls[rows])
        stepped = self.has_deadline[self.episode_index]
        calls = np.flatnonzero(stepped)
        local = np.searchsorted(rows, self.episode_index[calls])
        self.step_call = np.empty(self.steps.size, dtype=np.int64)
        self.step_call[self.steps.position(local, self.call_index[calls])] = calls
        width = max((len(sends_before[c]) for c in calls.tolist()), default=0)
        self.step_sends = np.zeros((width, self.steps.size))
        for position, c in zip(self.steps.position(local, self.call_index[calls]).tolist(), calls.tolist(),
                               strict=True):
            for j, sec in enumerate(sends_before[c]):
                self.step_sends[j, position] = sec
        self.step_duration = self.duration_sec[self.step_call]
        self.step_completed = self.completed[self.step_call]
        self.step_arrival = self.arrival_sec[rows][self.steps.order]
        self.step_deadline_at = self.deadline_at_sec[rows][self.steps.order]

    def _compile_rounds(self, sizes: np.ndarray, episode_of: np.ndarray) -> None:
        """Calls of every round with calls, for round silences; then regrouped per episode for the maximum."""
        self.rounds = PrefixLayout.of(sizes)
        first = np.cumsum(sizes) - sizes
        round_of_call = np.repeat(np.arange(sizes.size), sizes)
        within = np.arange(self.calls) - first[round_of_call] if self.calls else round_of_call
        self.round_call = np.empty(self.rounds.size, dtype=np.int64)
        self.round_call[self.rounds.position(round_of_call, within)] = np.arange(self.calls)
        sorted_episode = episode_of[self.rounds.order]
        self.round_regroup = np.argsort(sorted_episode, kind="stable")
        self.silence_episodes, self.silence_starts = np.unique(sorted_episode[self.round_regroup],
                                                               return_index=True)

    @property
    def calls(self) -> int:
        return int(self.event.size)

    def _earlier_in_episode(self, flags: np.ndarray) -> np.ndarray:
        """For each call, how many earlier calls of its episode have ``flags`` set."""
        counts = np.cumsum(flags, dtype=np.int64) - flags
        return counts - counts[self.first_call] if counts.size else counts

    # -- evaluation --------------------------------------------------------
    def tool_timeouts(self, policy: TimeoutPolicy) -> tuple[np.ndarray, np.ndarray]:
        """Per call: the policy's tool timeout without a deadline, and whether the deadline clamp applies."""
        pairs = list(zip(self.key_tools, self.key_args, strict=True))
        table = np.array([resolve_bound(policy, None, tool, args, narrowing=_NO_TIMEOUT, remaining_sec=None).sec
                          for tool, args in pairs] or [0.0], dtype=float)
        clamps = np.array([policy.clamps(None, tool, args) for tool, args in pairs] or [False], dtype=bool)
        return table[self.key_code], clamps[self.key_code]

    def evaluate(self, policy: SupportsTimeoutFor | None = None, narrowing: Narrowing | None = None) -> Evaluation:
        """Replay the corpus under ``policy`` and ``narrowing`` (defaults as :func:`reviewlab.replay.replay`)."""
        policy = policy if policy is not None else TimeoutPolicy.ouroboros()
        narrowing = narrowing or Narrowing()
        if narrowing.mode == "unbounded":
            return self._evaluate_unbounded()
        if type(policy) is TimeoutPolicy:
            bound, by_deadline = self._bounds(policy, narrowing)
        else:
            bound, by_deadline = self._bounds_per_call(policy, narrowing)
        duration, completed = self.duration_sec, self.completed
        abandoned = abandons_array(duration, completed, bound)
        wait = np.where(abandoned, bound, duration)
        outcome = (abandoned | self.status_error).astype(np.int8)  # ERROR = 1, EXECUTED = 0
        zombie = np.where(abandoned, np.where(completed, duration - bound, np.inf), 0.0)
        credited = Crediting.credited_lines_array(
            self.credits_tool, outcome == EXECUTED, self._earlier_in_episode(abandoned) > 0, self.requested_lines)
        t_call, wall = self._timeline(wait, self.sends, dispatch=True)
        loose = abandoned & (zombie != 0)  # the twin records a loose worker only while it runs
        start = t_call[loose] + bound[loose]
        peak = metrics.peak_overlap(start, start + zombie[loose])
        return Evaluation(bound, by_deadline, outcome, abandoned.astype(np.int8), credited, zombie, wall,
                          self._max_silence(wait), peak, unbounded=False)

    def _bounds(self, policy: TimeoutPolicy, narrowing: Narrowing) -> tuple[np.ndarray, np.ndarray]:
        """Bounds for an exact TimeoutPolicy: flat where the clock cannot matter, stepped where it can."""
        tool_sec, clamps = self.tool_timeouts(policy)
        bound, by_deadline = narrowing.narrow_array(tool_sec, self.no_deadline)
        step_clamps = clamps[self.step_call]
        any_clamp = bool(step_clamps.any())
        if self.steps.size == 0 or not (narrowing.mode in _READS_CLOCK or any_clamp):
            return bound, by_deadline
        step_tool = tool_sec[self.step_call]
        step_bound = np.empty(self.steps.size)
        step_by = np.empty(self.steps.size, dtype=bool)
        sends, durations, completed = self.step_sends, self.step_duration, self.step_completed
        t = self.step_arrival.copy()
        deadline_at = self.step_deadline_at
        for n, slab in self.steps.slabs():
            now = t[:n]  # a view: the first n sorted episodes still have this call
            for j in range(sends.shape[0]):
                now += sends[j, slab]
            remaining = np.maximum(0.0, deadline_at[:n] - now)
            sec = step_tool[slab]
            if any_clamp:
                sec = np.where(step_clamps[slab], policy.clamp_array(sec, remaining), sec)
            sec, by = narrowing.narrow_array(sec, remaining)
            dur = durations[slab]
            now += np.where(abandons_array(dur, completed[slab], sec), sec, dur)
            step_bound[slab] = sec
            step_by[slab] = by
        bound[self.step_call] = step_bound
        by_deadline[self.step_call] = step_by
        return bound, by_deadline

    def _bounds_per_call(self, policy: SupportsTimeoutFor, narrowing: Narrowing) -> tuple[np.ndarray, np.ndarray]:
        """Any other policy object: resolved call by call at its dispatch time (slow but exact).

        Such a policy may read anything (even the arguments it is not meant
        to), so no resolution is shared between calls.
        """
        bound = np.full(self.calls, np.nan)
        by_deadline = np.zeros(self.calls, dtype=bool)
        call_at = np.full(self.events.size, -1, dtype=np.int64)
        call_at[self.call_event] = np.arange(self.calls)
        for e in range(len(self.episode_ids)):
            t = float(self.arrival_sec[e])
            deadline_at = float(self.deadline_at_sec[e])
            rank = int(self.events.rank[e])
            for j, n in enumerate(self.events.active):
                if rank >= n:
                    break
                position = self.events.offsets[j] + rank
                c = int(call_at[position])
                if c < 0:
                    t += float(self.sends[position])
                    continue
                remaining = None if np.isnan(deadline_at) else max(0.0, deadline_at - t)
                b = resolve_bound(policy, None, str(self.tool_names[c]), self.call_args[c], narrowing=narrowing,
                                  remaining_sec=remaining)
                assert b.sec is not None
                bound[c], by_deadline[c] = b.sec, b.by == "deadline"
                dur = float(self.duration_sec[c])
                t += b.sec if abandons(dur, bool(self.completed[c]), b.sec) else dur
        return bound, by_deadline

    def _evaluate_unbounded(self) -> Evaluation:
        """The pre-fix behaviour: nothing is abandoned; under "wedge" a censored call ends its episode."""
        n = self.calls
        wedging = self.censored == "wedge"
        wedge = self.wedge if wedging else np.zeros(n, dtype=bool)
        withheld = self.after_wedge if wedging else np.zeros(n, dtype=bool)
        wait = np.where(withheld, 0.0, self.duration_sec)
        outcome = np.where(withheld, WITHHELD, np.where(wedge | self.status_error, ERROR, EXECUTED)).astype(np.int8)
        gap = np.where(wedge, 2, 0).astype(np.int8)
        credited = Crediting.credited_lines_array(
            self.credits_tool, outcome == EXECUTED, np.zeros(n, dtype=bool), self.requested_lines)
        _, wall = self._timeline(wait, self.sends_wedged if wedging else self.sends, dispatch=False)
        return Evaluation(np.full(n, np.nan), np.zeros(n, dtype=bool), outcome, gap, credited,
                          np.zeros(n), wall, self._max_silence(wait), 0, unbounded=True)

    def _timeline(self, wait: np.ndarray, sends: np.ndarray, *, dispatch: bool) -> tuple[np.ndarray, np.ndarray]:
        """Dispatch time of every call (if ``dispatch``) and wall time of every episode.

        Each episode's clock starts at its arrival and adds its sends and waits
        one by one, in order: the twin's additions, so the floats are identical.
        """
        increments = sends.copy()
        increments[self.call_event] = wait
        t = self.arrival_sec[self.events.order]
        before = np.empty(self.events.size) if dispatch else increments
        for n, slab in self.events.slabs():
            if dispatch:
                before[slab] = t[:n]
            t[:n] += increments[slab]
        wall = np.empty(len(self.episode_ids))
        wall[self.events.order] = t - self.arrival_sec[self.events.order]
        return (before[self.call_event] if dispatch else self.no_deadline), wall

    def _max_silence(self, wait: np.ndarray) -> np.ndarray:
        """Longest round silence per episode: the sum of a round's waits, in call order (0 without calls)."""
        waits = wait[self.round_call]
        silence = np.zeros(len(self.rounds.order))
        for n, slab in self.rounds.slabs():
            silence[:n] += waits[slab]
        out = np.zeros(len(self.episode_ids))
        if self.silence_starts.size:
            out[self.silence_episodes] = np.maximum.reduceat(silence[self.round_regroup], self.silence_starts)
        return out

    # -- results -----------------------------------------------------------
    def summary(self, policy: SupportsTimeoutFor | None = None, narrowing: Narrowing | None = None) -> dict[str, Any]:
        """:func:`reviewlab.metrics.summarize` of a replay, without building frames (for sweeps)."""
        return self.summarize(self.evaluate(policy, narrowing))

    def summarize(self, ev: Evaluation) -> dict[str, Any]:
        """The summary of an :class:`Evaluation` of this corpus."""
        return metrics.summarize_arrays(
            dispatched=ev.outcome != WITHHELD, abandoned=ev.gap == 1, zombie_sec=ev.zombie_sec,
            bounded=~np.isnan(ev.bound_sec), by_deadline=ev.by_deadline,
            requested_lines=self.requested_lines, credited_lines=ev.credited_lines,
            wall_sec=ev.wall_sec, max_silence_sec=ev.max_silence_sec, peak_loose_workers=ev.peak_loose_workers)

    def result(self, policy: SupportsTimeoutFor | None = None, narrowing: Narrowing | None = None) -> ReplayResult:
        """The full :class:`~reviewlab.replay.ReplayResult` (frames and summary) of one replay."""
        policy = policy if policy is not None else TimeoutPolicy.ouroboros()
        narrowing = narrowing or Narrowing()
        ev = self.evaluate(policy, narrowing)
        ids = np.array(self.episode_ids or [""], dtype=object)
        bound_by = np.where(ev.by_deadline, "deadline", "unbounded" if ev.unbounded else "tool_timeout")
        calls = pd.DataFrame({
            "episode_id": ids[self.episode_index], "round": self.round, "call_index": self.call_index,
            "tool": self.tool_names, "duration_sec": self.duration_sec, "completed": self.completed,
            "bound_sec": ev.bound_sec, "bound_by": bound_by.astype(object),
            "outcome": OUTCOMES[ev.outcome], "source_gap": GAPS[ev.gap],
            "requested_lines": self.requested_lines, "credited_lines": ev.credited_lines.astype(np.int64),
            "zombie_sec": ev.zombie_sec,
        }, columns=list(metrics.CALL_COLUMNS))
        base = pd.DataFrame({"episode_id": list(self.episode_ids),
                             "slot_id": list(self.slot_ids),
                             "wall_sec": ev.wall_sec, "max_silence_sec": ev.max_silence_sec})
        episodes = metrics.episode_rows(calls, base)
        summary = metrics.summarize(calls, episodes, peak_loose_workers=ev.peak_loose_workers)
        return ReplayResult(calls, episodes, summary, engine="vectorized", policy=policy, narrowing=narrowing)


def compile_corpus(episodes: Sequence[Episode], *, censored: str = "wedge", seed: int = 0) -> CompiledCorpus:
    """Compile ``episodes`` once for many replays (``censored`` and ``seed`` fix the imputed durations)."""
    return CompiledCorpus(list(episodes), censored=censored, seed=seed)


def replay_vectorized(
    episodes: Sequence[Episode] | CompiledCorpus,
    policy: SupportsTimeoutFor | None = None,
    narrowing: Narrowing | None = None,
    *,
    censored: Literal["wedge", "impute"] = "wedge",
    seed: int = 0,
    **options: Any,
) -> ReplayResult:
    """Replay ``episodes`` (or an already compiled corpus) with the vectorized engine; the twin's answers, fast."""
    if options:
        raise ValueError(f"replay_vectorized: unsupported option(s) {', '.join(sorted(options))}")
    if isinstance(episodes, CompiledCorpus):
        if episodes.censored != censored or episodes.seed != seed:
            raise ValueError("replay_vectorized: the compiled corpus was built with another censored/seed")
        corpus = episodes
    else:
        corpus = compile_corpus(episodes, censored=censored, seed=seed)
    return corpus.result(policy, narrowing)

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

from collections.abc import Sequence
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


class CompiledCorpus:
    """A corpus as columns, built once by :func:`compile_corpus` and replayed under many policies.

    Per call (length ``calls``, corpus order: episode order, then call order):
    ``episode_index, call_index, round, tool_code, key_code, duration_sec,
    completed`` (effective, after ``returned_after_sec`` and imputation),
    ``status_error, requested_lines, credits_tool``. Per episode: ``arrival_sec``,
    ``deadline_at_sec`` (``arrival + deadline_sec``, NaN without one). The
    timeline is an ``episodes × (events + 1)`` matrix whose column 0 is the
    arrival and whose later columns are the model sends and call waits in order.
    """

    def __init__(self, episodes: Sequence[Episode], *, censored: str = "wedge", seed: int = 0) -> None:
        if censored not in ("wedge", "impute"):
            raise ValueError(f"censored: expected 'wedge' or 'impute', got {censored!r}")
        self.censored = censored
        self.seed = seed
        imputed = impute_durations(episodes, seed) if censored == "impute" else {}
        self.episode_ids = [ep.id for ep in episodes]
        if len(set(self.episode_ids)) != len(self.episode_ids):
            raise ValueError("episodes: episode ids must be unique within a corpus")
        self.slot_ids = [ep.slot for ep in episodes]
        first = min((ep.started_at for ep in episodes), default=None)
        self.arrival_sec = np.array([(ep.started_at - first).total_seconds() for ep in episodes] if first else [])
        self.deadline_at_sec = np.array(
            [np.nan if ep.deadline_sec is None else arr + ep.deadline_sec
             for ep, arr in zip(episodes, self.arrival_sec.tolist(), strict=True)], dtype=float)
        self._compile_calls(episodes, imputed)

    # -- compilation -------------------------------------------------------
    def _compile_calls(self, episodes: Sequence[Episode], imputed: dict[tuple[str, int], float]) -> None:
        tools: dict[str, int] = {}
        keys: dict[tuple[str, Any], int] = {}
        self.key_args: list[dict[str, Any]] = []
        cols: dict[str, list[Any]] = {name: [] for name in (
            "episode_index", "call_index", "round", "tool_code", "key_code", "recorded_duration_sec",
            "recorded_completed", "duration_sec", "completed", "status_error", "requested_lines", "event")}
        self.call_args: list[dict[str, Any]] = []
        sends: list[tuple[int, int, float]] = []  # (episode, event column, seconds)
        events = np.zeros(len(episodes), dtype=np.int64)
        sends_before: list[list[float]] = []
        round_of_calls: list[list[int]] = []
        round_episode: list[int] = []
        for e, ep in enumerate(episodes):
            m = 0
            index = 0
            pending: list[float] = []
            for r, rnd in enumerate(ep.rounds, start=1):
                m += 1
                sends.append((e, m, rnd.send_sec))
                pending.append(rnd.send_sec)
                members: list[int] = []
                for call in rnd.calls:
                    m += 1
                    duration, completed = effective_observation(call)
                    if not completed and (ep.id, index) in imputed:
                        duration, completed = imputed[(ep.id, index)], True
                    tool = tools.setdefault(call.tool, len(tools))
                    key = keys.setdefault((call.tool, TimeoutPolicy.args_key(call.args)), len(keys))
                    if key == len(self.key_args):
                        self.key_args.append(call.args)
                    members.append(len(cols["event"]))
                    for name, value in (
                        ("episode_index", e), ("call_index", index), ("round", r), ("tool_code", tool),
                        ("key_code", key), ("recorded_duration_sec", call.duration_sec),
                        ("recorded_completed", call.completed), ("duration_sec", duration),
                        ("completed", completed), ("status_error", call.status == "error"),
                        ("requested_lines", call.requested_lines), ("event", m)):
                        cols[name].append(value)
                    self.call_args.append(call.args)
                    sends_before.append(pending)
                    pending = []
                    index += 1
                if members:
                    round_of_calls.append(members)
                    round_episode.append(e)
            events[e] = m
        self.tools = list(tools)
        self.key_tools = [tool for tool, _ in keys]
        def column(name: str, dtype: Any = np.int64) -> np.ndarray:
            return np.array(cols[name], dtype=dtype)

        self.episode_index = column("episode_index")
        self.call_index = column("call_index")
        self.round = column("round")
        self.tool_code = column("tool_code")
        self.key_code = column("key_code")
        self.event = column("event")
        self.requested_lines = column("requested_lines")
        self.recorded_duration_sec = column("recorded_duration_sec", float)
        self.recorded_completed = column("recorded_completed", bool)
        self.duration_sec = column("duration_sec", float)
        self.completed = column("completed", bool)
        self.status_error = column("status_error", bool)
        self.credits_tool = np.array([Crediting.credits_tool(t) for t in self.tools], dtype=bool)[self.tool_code] \
            if self.tools else np.zeros(0, dtype=bool)
        self.tool_names = np.array(self.tools, dtype=object)[self.tool_code] if self.tools else np.zeros(0, object)
        n_eps, width = len(self.episode_ids), int(events.max(initial=0)) + 1
        self.width = width
        self.send_inc = np.zeros((n_eps, width))
        self.send_inc[:, 0] = self.arrival_sec
        for e, m, sec in sends:
            self.send_inc[e, m] = sec
        self.call_slot = self.episode_index * width + self.event
        self._compile_wedges()
        self._compile_rounds(round_of_calls, round_episode)
        self._compile_stepping(sends_before)

    def _compile_wedges(self) -> None:
        """Under the pre-fix policy the first still-censored call of an episode wedges it."""
        n = self.calls
        censored = ~self.completed
        before = _exclusive_count_in_episode(censored, self.episode_index, len(self.episode_ids))
        self.wedge = censored & (before == 0)
        self.after_wedge = before > 0
        # The wedged episode ends after the wedge: later sends never happen.
        self.send_inc_unbounded = self.send_inc.copy()
        wedge_at = np.full(len(self.episode_ids), self.width, dtype=np.int64)
        wedge_at[self.episode_index[self.wedge]] = self.event[self.wedge]
        self.send_inc_unbounded[np.arange(self.width)[None, :] > wedge_at[:, None]] = 0.0
        self.zeros = np.zeros(n)

    def _compile_rounds(self, round_of_calls: list[list[int]], round_episode: list[int]) -> None:
        """Rounds with calls, longest first, so summing waits per round steps over prefixes."""
        sizes = np.array([len(r) for r in round_of_calls], dtype=np.int64)
        order = np.argsort(-sizes, kind="stable")
        width = int(sizes.max(initial=0))
        self.round_calls = np.zeros((len(round_of_calls), width), dtype=np.int64)
        for row, r in enumerate(order.tolist()):
            self.round_calls[row, : sizes[r]] = round_of_calls[r]
        self.round_active = [int(np.count_nonzero(sizes > j)) for j in range(width)]
        # Back to episode order for the per-episode maximum.
        episode_of = np.array(round_episode, dtype=np.int64)[order]
        self.round_regroup = np.argsort(episode_of, kind="stable")
        grouped = episode_of[self.round_regroup]
        self.silence_episodes, self.silence_starts = np.unique(grouped, return_index=True)

    def _compile_stepping(self, sends_before: list[list[float]]) -> None:
        """Episodes with a deadline, most calls first: call position ``k`` steps over a prefix of rows."""
        has_deadline = ~np.isnan(self.deadline_at_sec)
        n_calls = np.bincount(self.episode_index, minlength=len(self.episode_ids))
        rows = np.flatnonzero(has_deadline)
        rows = rows[np.argsort(-n_calls[rows], kind="stable")]
        self.step_rows = rows
        depth = int(n_calls[rows].max(initial=0))
        self.step_active = [int(np.count_nonzero(n_calls[rows] > k)) for k in range(depth)]
        first_call = np.concatenate([[0], np.cumsum(n_calls)[:-1]]) if n_calls.size else n_calls
        self.step_calls = np.zeros((rows.size, depth), dtype=np.int64)
        n_sends = max((len(s) for s in sends_before), default=0)
        self.step_sends = np.zeros((rows.size, depth, n_sends))
        for i, e in enumerate(rows.tolist()):
            for k in range(int(n_calls[e])):
                c = int(first_call[e]) + k
                self.step_calls[i, k] = c
                self.step_sends[i, k, : len(sends_before[c])] = sends_before[c]
        self.has_deadline = has_deadline

    @property
    def calls(self) -> int:
        return int(self.event.size)

    # -- evaluation --------------------------------------------------------
    def tool_timeouts(self, policy: TimeoutPolicy) -> tuple[np.ndarray, np.ndarray]:
        """Per call: the policy's tool timeout without a deadline, and whether the deadline clamp applies."""
        table = np.array([
            resolve_bound(policy, None, tool, args, narrowing=_NO_TIMEOUT, remaining_sec=None).sec
            for tool, args in zip(self.key_tools, self.key_args, strict=True)], dtype=float)
        clamps = np.array([policy.clamps(None, tool, args) for tool, args in zip(
            self.key_tools, self.key_args, strict=True)], dtype=bool)
        return table[self.key_code] if table.size else self.zeros.copy(), \
            clamps[self.key_code] if clamps.size else np.zeros(0, bool)

    def evaluate(self, policy: SupportsTimeoutFor | None = None, narrowing: Narrowing | None = None) -> Evaluation:
        """Replay the corpus under ``policy`` and ``narrowing`` (defaults as :func:`reviewlab.replay.replay`)."""
        policy = policy if policy is not None else TimeoutPolicy.ouroboros()
        narrowing = narrowing or Narrowing()
        if narrowing.mode == "unbounded":
            return self._evaluate_unbounded()
        if type(policy) is not TimeoutPolicy:
            bound, by_deadline = self._bounds_per_call(policy, narrowing)
        else:
            bound, by_deadline = self._bounds(policy, narrowing)
        duration, completed = self.duration_sec, self.completed
        abandoned = abandons_array(duration, completed, bound)
        wait = np.where(abandoned, bound, duration)
        outcome = np.where(abandoned | self.status_error, ERROR, EXECUTED).astype(np.int8)
        gap = abandoned.astype(np.int8)
        zombie = np.where(abandoned, np.where(completed, duration - bound, np.inf), 0.0)
        credited = Crediting.credited_lines_array(
            self.credits_tool, outcome == EXECUTED,
            _exclusive_count_in_episode(abandoned, self.episode_index, len(self.episode_ids)) > 0,
            self.requested_lines)
        t_call, wall = self._timeline(wait, self.send_inc)
        loose = abandoned & (zombie != 0)
        start = t_call[loose] + bound[loose]
        peak = metrics.peak_overlap(start, start + zombie[loose])
        return Evaluation(bound, by_deadline, outcome, gap, credited, zombie, wall,
                          self._max_silence(wait), peak, unbounded=False)

    def _bounds(self, policy: TimeoutPolicy, narrowing: Narrowing) -> tuple[np.ndarray, np.ndarray]:
        """Bounds for an exact TimeoutPolicy: flat where the clock cannot matter, stepped where it can."""
        tool_sec, clamps = self.tool_timeouts(policy)
        no_deadline = np.full(self.calls, np.nan)
        bound, by_deadline = narrowing.narrow_array(tool_sec, no_deadline)
        reads_clock = narrowing.mode in _READS_CLOCK or bool(np.any(clamps & self.has_deadline[self.episode_index]))
        if not reads_clock or self.step_rows.size == 0:
            return bound, by_deadline
        calls, sends = self.step_calls, self.step_sends
        step_tool, step_clamps = tool_sec[calls], clamps[calls]
        step_dur, step_done = self.duration_sec[calls], self.completed[calls]
        step_bound = np.zeros(calls.shape)
        step_by = np.zeros(calls.shape, dtype=bool)
        t = self.arrival_sec[self.step_rows]
        deadline_at = self.deadline_at_sec[self.step_rows]
        any_clamp = bool(step_clamps.any())
        for k, n in enumerate(self.step_active):
            now = t[:n]  # a view: rows are ordered so the first n still have a k-th call
            for j in range(sends.shape[2]):
                now += sends[:n, k, j]
            remaining = np.maximum(0.0, deadline_at[:n] - now)
            sec = step_tool[:n, k]
            if any_clamp:
                sec = np.where(step_clamps[:n, k], policy.clamp_array(sec, remaining), sec)
            sec, by = narrowing.narrow_array(sec, remaining)
            dur = step_dur[:n, k]
            now += np.where(abandons_array(dur, step_done[:n, k], sec), sec, dur)
            step_bound[:n, k] = sec
            step_by[:n, k] = by
        filled = np.arange(calls.shape[1])[None, :] < np.bincount(
            self.episode_index, minlength=len(self.episode_ids))[self.step_rows][:, None]
        bound[calls[filled]] = step_bound[filled]
        by_deadline[calls[filled]] = step_by[filled]
        return bound, by_deadline

    def _bounds_per_call(self, policy: SupportsTimeoutFor, narrowing: Narrowing) -> tuple[np.ndarray, np.ndarray]:
        """Any other policy object: resolved call by call at its dispatch time (slow but exact)."""
        bound = np.full(self.calls, np.nan)
        by_deadline = np.zeros(self.calls, dtype=bool)
        starts = np.searchsorted(self.episode_index, np.arange(len(self.episode_ids)))
        ends = np.append(starts[1:], self.calls)
        for e in range(len(self.episode_ids)):
            t = float(self.arrival_sec[e])
            deadline_at = float(self.deadline_at_sec[e])
            for c in range(int(starts[e]), int(ends[e])):
                for m in range(int(self.event[c - 1]) + 1 if c > starts[e] else 1, int(self.event[c])):
                    t += float(self.send_inc[e, m])
                remaining = None if np.isnan(deadline_at) else max(0.0, deadline_at - t)
                b = resolve_bound(policy, None, self.tool_names[c], self.call_args[c], narrowing=narrowing,
                                  remaining_sec=remaining)
                assert b.sec is not None
                bound[c], by_deadline[c] = b.sec, b.by == "deadline"
                dur = float(self.duration_sec[c])
                t += b.sec if abandons(dur, bool(self.completed[c]), b.sec) else dur
        return bound, by_deadline

    def _evaluate_unbounded(self) -> Evaluation:
        """The pre-fix behaviour: nothing is abandoned; under "wedge" a censored call ends its episode."""
        n = self.calls
        wedge = self.wedge if self.censored == "wedge" else np.zeros(n, dtype=bool)
        withheld = self.after_wedge if self.censored == "wedge" else np.zeros(n, dtype=bool)
        wait = np.where(withheld, 0.0, np.where(wedge, self.recorded_duration_sec, self.duration_sec))
        outcome = np.where(withheld, WITHHELD, np.where(wedge | self.status_error, ERROR, EXECUTED)).astype(np.int8)
        gap = np.where(wedge, 2, 0).astype(np.int8)
        credited = Crediting.credited_lines_array(
            self.credits_tool, outcome == EXECUTED, np.zeros(n, dtype=bool), self.requested_lines)
        sends = self.send_inc_unbounded if self.censored == "wedge" else self.send_inc
        _, wall = self._timeline(wait, sends)
        return Evaluation(np.full(n, np.nan), np.zeros(n, dtype=bool), outcome, gap, credited,
                          np.zeros(n), wall, self._max_silence(wait), 0, unbounded=True)

    def _timeline(self, wait: np.ndarray, sends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Dispatch time of every call and wall time of every episode, summed in the twin's order."""
        increments = sends.copy()
        increments.ravel()[self.call_slot] = wait
        clock = np.cumsum(increments, axis=1)
        return clock.ravel()[self.call_slot - 1], clock[:, -1] - self.arrival_sec

    def _max_silence(self, wait: np.ndarray) -> np.ndarray:
        """Longest round silence per episode: the sum of a round's waits, in call order."""
        silence = np.zeros(self.round_calls.shape[0])
        for j, n in enumerate(self.round_active):
            silence[:n] += wait[self.round_calls[:n, j]]
        out = np.zeros(len(self.episode_ids))
        if self.silence_starts.size:
            out[self.silence_episodes] = np.maximum.reduceat(silence[self.round_regroup], self.silence_starts)
        return np.maximum(out, 0.0)

    # -- results -----------------------------------------------------------
    def summary(self, policy: SupportsTimeoutFor | None = None, narrowing: Narrowing | None = None) -> dict[str, Any]:
        """:func:`reviewlab.metrics.summarize` of a replay, without building frames (for sweeps)."""
        ev = self.evaluate(policy, narrowing)
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
        ids = np.array(self.episode_ids, dtype=object)
        bound_by = np.where(ev.unbounded, "unbounded", np.where(ev.by_deadline, "deadline", "tool_timeout"))
        calls = pd.DataFrame({
            "episode_id": ids[self.episode_index] if self.calls else np.zeros(0, object),
            "round": self.round, "call_index": self.call_index,
            "tool": self.tool_names, "duration_sec": self.duration_sec, "completed": self.completed,
            "bound_sec": ev.bound_sec, "bound_by": bound_by.astype(object),
            "outcome": OUTCOMES[ev.outcome], "source_gap": GAPS[ev.gap],
            "requested_lines": self.requested_lines, "credited_lines": ev.credited_lines.astype(np.int64),
            "zombie_sec": ev.zombie_sec,
        }, columns=list(metrics.CALL_COLUMNS))
        base = pd.DataFrame({"episode_id": ids, "slot_id": np.array(self.slot_ids, dtype=object),
                             "wall_sec": ev.wall_sec, "max_silence_sec": ev.max_silence_sec})
        episodes = metrics.episode_rows(calls, base)
        summary = metrics.summarize(calls, episodes, peak_loose_workers=ev.peak_loose_workers)
        return ReplayResult(calls, episodes, summary, engine="vectorized", policy=policy, narrowing=narrowing)


def _exclusive_count_in_episode(flags: np.ndarray, episode_index: np.ndarray, n_episodes: int) -> np.ndarray:
    """For each call, how many earlier calls of its episode have ``flags`` set."""
    counts = np.cumsum(flags, dtype=np.int64) - flags
    if counts.size == 0:
        return counts
    firsts = np.searchsorted(episode_index, np.arange(n_episodes))
    base = counts[np.minimum(firsts, counts.size - 1)]
    return counts - base[episode_index]


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

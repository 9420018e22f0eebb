"""Vectorized replay: NumPy over every call of every episode at once (no reviewer pool).

Lifecycle: :func:`compile_corpus` turns a corpus into a :class:`CompiledCorpus`
once (everything the policy cannot change: durations, sends, keys, deadlines,
and the layouts below); :meth:`CompiledCorpus.evaluate` then replays it under
one policy and narrowing, as often as a sweep likes, without a Python object
per call; :meth:`~CompiledCorpus.summary` stops at the summary dict and
:meth:`~CompiledCorpus.result` builds the twin's frames.
:func:`replay_vectorized` is the ``engine="vectorized"`` entry of
:func:`reviewlab.replay.replay`.

How one replay runs. Every *event* of an episode (a model send, or a call) is
a step of the episode's clock: ``t += send`` or ``t += wait``. A send is a step
whose bound is ``inf`` (never abandoned), so one set of event arrays serves both.

1. Static pass. Without a deadline a call's bound depends only on the policy,
   its tool and :meth:`TimeoutPolicy.args_key`: resolved once per key with
   :func:`~reviewlab.policy.resolve_bound`, looked up per event, fates by
   :func:`~reviewlab.receipts.abandons_array`, and the clocks advanced.
2. Deadline pass (only for a narrowing that reads the clock, or a clamped
   tool). For the calls of episodes with a deadline, the remaining time is
   read off that provisional clock and the bound recomputed with
   :meth:`TimeoutPolicy.clamp_array` and :meth:`Narrowing.narrow_array`. While
   an episode's *waits* are unchanged its provisional clock is exact, so the
   recomputed bounds are too; usually every episode passes.
3. Settling. The few episodes in which some wait changed are iterated to
   their fixed point on a small [event, episode] block (each iteration settles
   at least one more event, so it ends; in practice in two or three).

Invariants (the contract with the twin, briefing "Replay semantics"):

* Clocks are accumulated exactly like the twin's: ``t = arrival``, then one
  addition per event in event order (the column-wise running sums of
  :class:`PrefixLayout` and ``cumsum`` along an episode column are sequential),
  so every float — remaining time, deadline bound, wall time — is
  bit-identical to the twin's; round silences likewise add their waits in order.
* Bounds, clamps, fates and credits come from the shared rules only (above,
  and :meth:`~reviewlab.receipts.Crediting.credited_lines_array`); the summary
  is :func:`reviewlab.metrics.summarize_arrays`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from reviewlab import metrics
from reviewlab.policy import Narrowing, SupportsTimeoutFor, TimeoutPolicy, resolve_bound
from reviewlab.receipts import SOURCE_GAP_ABANDONED, SOURCE_GAP_WEDGED, Crediting, abandons_array
from reviewlab.recording.schema import Episode
from reviewlab.replay import ReplayResult
from reviewlab.twin.impute import effective_observation, impute_durations

__all__ = ["CompiledCorpus", "Evaluation", "PrefixLayout", "compile_corpus", "replay_vectorized"]

OUTCOMES = np.array(["executed", "error", "withheld"], dtype=object)
EXECUTED, ERROR, WITHHELD = 0, 1, 2
GAPS = np.array(["", SOURCE_GAP_ABANDONED, SOURCE_GAP_WEDGED], dtype=object)
_NO_NARROWING = Narrowing("none")  # the bare tool timeout, through resolve_bound's validation
_READS_CLOCK = ("inherit", "reserve", "fraction")


@dataclass(frozen=True)
class PrefixLayout:
    """Rows of unequal length stored column by column, longest rows first, without padding.

    Column ``j`` holds the ``active[j]`` rows that have a ``j``-th item, as the
    contiguous slab ``offsets[j] : offsets[j] + active[j]``; because rows are
    sorted by length, those are always the first ``active[j]`` sorted rows, so a
    running per-row value is one vector addition per column, on views only.
    ``order[i]`` is the original row of sorted row ``i``; ``rank`` its inverse.
    """

    order: np.ndarray
    rank: np.ndarray
    active: tuple[int, ...]
    offsets: tuple[int, ...]

    @classmethod
    def of(cls, lengths: np.ndarray) -> PrefixLayout:
        lengths = np.asarray(lengths, dtype=np.intp)
        order = np.argsort(-lengths, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        depth = int(lengths.max(initial=0))
        counts = np.bincount(lengths, minlength=depth + 1)
        active = (lengths.size - np.cumsum(counts))[:depth]  # rows longer than j
        offsets = np.concatenate([[0], np.cumsum(active)]).astype(np.intp)
        return cls(order, rank, tuple(active.tolist()), tuple(offsets.tolist()))

    @property
    def size(self) -> int:
        return self.offsets[-1] if self.offsets else 0

    def position(self, rows: np.ndarray, columns: np.ndarray) -> np.ndarray:
        """Slab position of item ``columns`` of original row ``rows``."""
        return np.asarray(self.offsets, dtype=np.intp)[columns] + self.rank[rows]

    def running_sums(self, start: np.ndarray, increments: np.ndarray) -> np.ndarray:
        """Per sorted row: ``start`` plus its increments one by one; the value after every item.

        ``out[p]`` is the row's running value after item ``p`` (the twin's
        ``t += x`` sequence, so the floats are the twin's). ``out`` has one
        spare trailing slot, like the event arrays it is indexed with.
        """
        out = np.empty(increments.size)
        previous = start
        for j, n in enumerate(self.active):
            current = out[self.offsets[j]:self.offsets[j] + n]
            np.add(previous[:n], increments[self.offsets[j]:self.offsets[j] + n], out=current)
            previous = current
        return out


class Evaluation:
    """One replay of a compiled corpus: the event-level decisions, and per-call/per-episode views of them.

    Per episode (corpus order, built on access): ``wall_sec``,
    ``max_silence_sec``. Across the corpus: ``peak_loose_workers``. Per call
    (corpus order, built on access): ``bound_sec`` (NaN: unbounded or never started), ``by_deadline``,
    ``outcome`` (codes into ``OUTCOMES``), ``gap`` (codes into ``GAPS``),
    ``credited_lines``, ``zombie_sec``.
    """

    def __init__(self, corpus: CompiledCorpus, *, bound: np.ndarray, by_deadline: np.ndarray, abandoned: np.ndarray,
                 abandoned_calls: np.ndarray, zombie: np.ndarray, credited: np.ndarray, wall_sorted: np.ndarray,
                 round_silence: np.ndarray, peak_loose_workers: int, unbounded: bool) -> None:
        self.corpus = corpus
        self.events_bound = bound  # event space; inf for sends
        self.events_by_deadline = by_deadline
        self.events_abandoned = abandoned
        self.abandoned_calls = abandoned_calls  # corpus call indices, ascending
        self.zombie_sec = zombie
        self.credited_read = credited  # per call of corpus.read_calls
        self.wall_sorted = wall_sorted  # per episode in corpus.events order
        self.round_silence = round_silence  # per round with calls in corpus.rounds order
        self.peak_loose_workers = peak_loose_workers
        self.unbounded = unbounded

    @property
    def wall_sec(self) -> np.ndarray:
        return self.wall_sorted[self.corpus.events.rank]

    @property
    def max_silence_sec(self) -> np.ndarray:
        """Longest round silence per episode (0 for an episode without calls)."""
        c = self.corpus
        out = np.zeros(len(c.episode_ids))
        if c.silence_starts.size:
            out[c.silence_episodes] = np.maximum.reduceat(self.round_silence[c.round_regroup], c.silence_starts)
        return out

    @property
    def bound_sec(self) -> np.ndarray:
        return self.events_bound[self.corpus.call_event]

    @property
    def by_deadline(self) -> np.ndarray:
        return self.events_by_deadline[self.corpus.call_event]

    @property
    def gap(self) -> np.ndarray:
        if self.unbounded:
            return np.where(self.corpus.unbounded_wedge, 2, 0).astype(np.int8)
        gap = np.zeros(self.corpus.calls, dtype=np.int8)
        gap[self.abandoned_calls] = 1
        return gap

    @property
    def outcome(self) -> np.ndarray:
        if self.unbounded:
            return self.corpus.unbounded_outcome
        return ((self.gap == 1) | self.corpus.status_error).astype(np.int8)  # ERROR = 1, EXECUTED = 0

    @property
    def credited_lines(self) -> np.ndarray:
        credited = np.zeros(self.corpus.calls, dtype=np.int64)
        credited[self.corpus.read_calls] = self.credited_read
        return credited

    def summary(self) -> dict[str, Any]:
        """:func:`reviewlab.metrics.summarize_arrays` of this replay, in O(abandoned calls) beyond the arrays.

        That function reads only counts and sums of every per-call array but
        ``zombie_sec`` (whose float sum depends on order, and which is in call
        order here), and only quantiles and maxima of the per-episode ones. So
        ``by_deadline`` is given in event space (sends count as False), the
        line counts for the calls that ask for lines only (every other call
        adds 0), wall times in layout order, and the silences per round (the
        longest round is the longest episode maximum; an episode without calls
        has 0, which no round is below): the same figures, without gathers.
        """
        c = self.corpus
        abandoned = np.zeros(c.calls, dtype=bool)
        abandoned[self.abandoned_calls] = True
        return metrics.summarize_arrays(
            dispatched=c.unbounded_dispatched if self.unbounded else c.all_calls,
            abandoned=abandoned, zombie_sec=self.zombie_sec,
            bounded=~c.all_calls if self.unbounded else c.all_calls, by_deadline=self.events_by_deadline,
            requested_lines=c.read_requested, credited_lines=self.credited_read,
            wall_sec=self.wall_sorted, max_silence_sec=self.round_silence, peak_loose_workers=self.peak_loose_workers)


class CompiledCorpus:
    """A corpus as columns, built once by :func:`compile_corpus` and replayed under many policies.

    Per call (corpus order: episode order, then call order): ``episode_index,
    call_index, round, tool_names, duration_sec, completed`` (effective: after
    ``returned_after_sec`` and imputation), ``status_error, requested_lines``.
    Per episode: ``arrival_sec``, ``deadline_at_sec`` (``arrival + deadline_sec``,
    NaN without one). The event arrays (``event_*``, one slot per event in
    :attr:`events` order plus a spare harmless slot) hold what the replay steps
    through; :attr:`rounds` orders the calls of every round for the silences.
    """

    def __init__(self, episodes: Sequence[Episode], *, censored: str = "wedge", seed: int = 0) -> None:
        if censored not in ("wedge", "impute"):
            raise ValueError(f"censored: expected 'wedge' or 'impute', got {censored!r}")
        self.censored = censored
        self.seed = seed
        seen: dict[str, int] = {}
        for position, ep in enumerate(episodes):
            if not isinstance(ep, Episode):
                raise TypeError(f"episodes[{position}]: expected a reviewlab Episode, got {type(ep).__name__}")
            if ep.id in seen:
                raise ValueError(f"episodes[{position}].id: {ep.id!r} repeats episodes[{seen[ep.id]}].id")
            seen[ep.id] = position
        self.episode_ids = [ep.id for ep in episodes]
        self.slot_ids = [ep.slot for ep in episodes]
        imputed = impute_durations(episodes, seed) if censored == "impute" else {}
        first = min((ep.started_at for ep in episodes), default=None)
        arrival = [(ep.started_at - first).total_seconds() for ep in episodes] if first is not None else []
        self.arrival_sec = np.array(arrival, dtype=float)
        self.deadline_at_sec = np.array(
            [np.nan if ep.deadline_sec is None else arr + ep.deadline_sec
             for ep, arr in zip(episodes, arrival, strict=True)], dtype=float)
        self._compile(episodes, imputed)
        self._string_columns: tuple[Any, Any] | None = None

    @property
    def calls(self) -> int:
        return int(self.call_event.size)

    # -- compilation -------------------------------------------------------
    def _compile(self, episodes: Sequence[Episode], imputed: dict[tuple[str, int], float]) -> None:
        tools: dict[str, int] = {}
        keys: dict[tuple[str, Any], int] = {}
        self.key_args: list[Any] = []
        self.call_args: list[Any] = []
        no_args = TimeoutPolicy.args_key({})
        rows: list[tuple[Any, ...]] = []
        event_sec: list[float] = []  # corpus event order: a send's seconds or a call's effective duration
        n_events: list[int] = []
        round_sizes: list[int] = []
        round_episode: list[int] = []
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
                    key = keys.setdefault((call.tool, TimeoutPolicy.args_key(args) if args else no_args), len(keys))
                    if key == len(self.key_args):
                        self.key_args.append(args)
                    rows.append((e, r, tool, key, m, call.requested_lines, duration, completed,
                                 call.status == "error"))
                    self.call_args.append(args)
                    event_sec.append(duration)
                    index += 1
                    m += 1
                if rnd.calls:
                    round_sizes.append(len(rnd.calls))
                    round_episode.append(e)
            n_events.append(m)
        columns: list[Any] = list(zip(*rows, strict=True)) if rows else [()] * 9
        self.episode_index, self.round, tool_code, key_code, event_column, self.requested_lines = (
            np.array(c, dtype=np.intp) for c in columns[:6])
        self.duration_sec = np.array(columns[6], dtype=float)
        self.completed = np.array(columns[7], dtype=bool)
        self.status_error = np.array(columns[8], dtype=bool)
        n_calls = np.bincount(self.episode_index, minlength=len(episodes))
        self.call_index = np.arange(len(rows), dtype=np.intp) - (np.cumsum(n_calls) - n_calls)[self.episode_index]
        self.tools = list(tools)
        self.key_tools = [tool for tool, _ in keys]
        self.tool_names = np.array(self.tools or [""], dtype=object)[tool_code]
        credits = np.array([Crediting.credits_tool(t) for t in self.tools] or [False], dtype=bool)[tool_code]
        self.all_calls = np.ones(len(rows), dtype=bool)
        self._compile_events(np.array(n_events, dtype=np.intp), np.array(event_sec, dtype=float), key_code,
                             event_column)
        self._compile_rounds(np.array(round_sizes, dtype=np.intp), np.array(round_episode, dtype=np.intp))
        self._compile_reads(credits)
        self._compile_unbounded(event_column)

    def _compile_events(self, n_events: np.ndarray, event_sec: np.ndarray, key_code: np.ndarray,
                        event_column: np.ndarray) -> None:
        """Every event in :class:`PrefixLayout` order; a send is a step with key ``len(key_args)`` (never bounded)."""
        self.events = events = PrefixLayout.of(n_events)
        n = events.size
        episode = np.repeat(np.arange(n_events.size), n_events)
        first_event = np.cumsum(n_events) - n_events
        column = np.arange(n) - first_event[episode]
        position = events.position(episode, column)
        self.event_count = n_events[events.order]  # per sorted row
        self.arrival_sorted = self.arrival_sec[events.order]
        self.deadline_at_sorted = self.deadline_at_sec[events.order]
        self.call_event = position[first_event[self.episode_index] + event_column]
        self.event_duration = np.zeros(n + 1)
        self.event_duration[position] = event_sec
        self.event_completed = np.ones(n + 1, dtype=bool)
        self.event_completed[self.call_event] = self.completed
        self.event_key = np.full(n + 1, len(self.key_args), dtype=np.intp)
        self.event_key[self.call_event] = key_code
        self.event_call = np.full(n + 1, -1, dtype=np.intp)
        self.event_call[self.call_event] = np.arange(self.call_event.size)
        self.event_row = np.zeros(n + 1, dtype=np.intp)
        self.event_row[position] = events.rank[episode]
        self.event_column = np.zeros(n + 1, dtype=np.intp)
        self.event_column[position] = column
        self.offsets = np.asarray(events.offsets, dtype=np.intp)
        nonempty = events.active[0] if events.active else 0
        self.last_event = self.offsets[self.event_count[:nonempty] - 1] + np.arange(nonempty)
        # The calls whose bound may read the clock: those of episodes with a deadline.
        dl = np.sort(self.call_event[~np.isnan(self.deadline_at_sec[self.episode_index])])
        self.dl_event = dl
        self.dl_row = self.event_row[dl]
        self.dl_previous = self._previous(dl)
        self.dl_deadline_at = self.deadline_at_sorted[self.dl_row]
        self.dl_duration = self.event_duration[dl]
        self.dl_completed = self.event_completed[dl]
        self.dl_key = self.event_key[dl]

    def _previous(self, events: np.ndarray) -> np.ndarray:
        """Position of the event before each of ``events`` (a call always follows its round's send)."""
        return self.offsets[self.event_column[events] - 1] + self.event_row[events]

    def _compile_rounds(self, sizes: np.ndarray, episode_of: np.ndarray) -> None:
        """Calls of every round with calls, for round silences; then regrouped per episode for the maximum."""
        self.rounds = PrefixLayout.of(sizes)
        first = np.cumsum(sizes) - sizes
        round_of_call = np.repeat(np.arange(sizes.size), sizes)
        within = np.arange(self.calls) - first[round_of_call]
        self.round_event = np.empty(self.rounds.size, dtype=np.intp)
        self.round_event[self.rounds.position(round_of_call, within)] = self.call_event
        sorted_episode = episode_of[self.rounds.order]
        self.round_regroup = np.argsort(sorted_episode, kind="stable")
        self.silence_episodes, self.silence_starts = np.unique(sorted_episode[self.round_regroup],
                                                               return_index=True)

    def _compile_reads(self, credits: np.ndarray) -> None:
        """The calls that ask for lines (every other call is credited 0 whatever the rule), in event order."""
        asking = np.flatnonzero(self.requested_lines > 0)
        asking = asking[np.argsort(self.call_event[asking], kind="stable")]
        self.read_calls = asking
        self.read_event = self.call_event[asking]
        self.read_row = self.event_row[self.read_event]
        self.read_column = self.event_column[self.read_event]
        self.read_requested = self.requested_lines[asking]
        self.read_credits = credits[asking]
        self.read_error = self.status_error[asking]

    def _compile_unbounded(self, event_column: np.ndarray) -> None:
        """The pre-fix replay, which no policy changes: under "wedge" a censored call ends its episode."""
        n = self.calls
        wedge = np.zeros(n, dtype=bool)
        withheld = np.zeros(n, dtype=bool)
        self.unbounded_wait = self.event_duration.copy()
        if self.censored == "wedge":
            censored = np.flatnonzero(~self.completed)
            first = np.full(len(self.episode_ids), np.iinfo(np.intp).max, dtype=np.intp)
            np.minimum.at(first, self.episode_index[censored], event_column[censored])
            ends_at = first[self.episode_index]
            wedge = ~self.completed & (event_column == ends_at)
            withheld = event_column > ends_at
            # The episode's log ends at the wedge: later sends and calls never take time.
            later = self.event_column > first[self.events.order][self.event_row]
            self.unbounded_wait[later] = 0.0
        self.unbounded_wedge = wedge
        self.unbounded_dispatched = ~withheld
        self.unbounded_outcome = np.where(
            withheld, WITHHELD, np.where(wedge | self.status_error, ERROR, EXECUTED)).astype(np.int8)

    # -- evaluation --------------------------------------------------------
    def _tables(self, policy: SupportsTimeoutFor, narrowing: Narrowing) -> tuple[
            np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
        """``(event keys, tool timeout per key, bound without a deadline per key, clamped per key or None)``.

        A :class:`TimeoutPolicy` reads only the tool and ``args_key``, so it is
        resolved once per key. Any other policy object may read anything, so
        every call is its own key (its timeout still never depends on the
        clock: :func:`resolve_bound` gives such a policy no remaining time).
        The last key is the model send's: ``inf``, never bounded.
        """
        if type(policy) is TimeoutPolicy:
            pairs = list(zip(self.key_tools, self.key_args, strict=True))
            keys = self.event_key
            clamps: np.ndarray | None = np.array([policy.clamps(None, t, a) for t, a in pairs] + [False])
            assert clamps is not None
            if not clamps.any():
                clamps = None
        else:
            pairs = list(zip(self.tool_names.tolist(), self.call_args, strict=True))
            keys = np.where(self.event_call >= 0, self.event_call, self.calls)
            clamps = None
        raw = [resolve_bound(policy, None, t, a, narrowing=_NO_NARROWING, remaining_sec=None).sec for t, a in pairs]
        tool_sec = np.array([*raw, np.inf], dtype=float)
        static, _ = narrowing.narrow_array(tool_sec[:-1], np.full(len(pairs), np.nan))
        return keys, tool_sec, np.append(static, np.inf), clamps

    def evaluate(self, policy: SupportsTimeoutFor | None = None, narrowing: Narrowing | None = None) -> Evaluation:
        """Replay the corpus under ``policy`` and ``narrowing`` (defaults as :func:`reviewlab.replay.replay`)."""
        policy = policy if policy is not None else TimeoutPolicy.ouroboros()
        narrowing = narrowing or Narrowing()
        if narrowing.mode == "unbounded":
            return self._evaluate_unbounded()
        keys, tool_sec, static, clamps = self._tables(policy, narrowing)
        bound = static.take(keys)
        abandoned = abandons_array(self.event_duration, self.event_completed, bound)
        wait = self.event_duration.copy()  # an abandoned call waits its bound (few calls: a masked copy)
        np.copyto(wait, bound, where=abandoned)
        clock = self.events.running_sums(self.arrival_sorted, wait)
        by_deadline = np.zeros(bound.size, dtype=bool)
        dl_keys = self.dl_key if keys is self.event_key else keys[self.dl_event]
        clamped = clamps is not None and bool(clamps.take(dl_keys).any())
        if self.dl_event.size and (narrowing.mode in _READS_CLOCK or clamped):
            assert not clamped or isinstance(policy, TimeoutPolicy)
            state = (bound, by_deadline, abandoned, wait, clock)
            step = _DeadlineStep(policy, narrowing, tool_sec, clamps if clamped else None)
            changed = self._deadline_pass(step, dl_keys, state)
            if changed.size:
                self._settle(step, keys, changed, state)
        return self._finish(bound, by_deadline, abandoned, wait, clock)

    def _deadline_pass(self, step: _DeadlineStep, dl_keys: np.ndarray, state: tuple[np.ndarray, ...]) -> np.ndarray:
        """Bounds of the deadline episodes' calls on the provisional clock; the rows whose waits changed.

        Exact in every episode whose waits all stay the same (its clock was
        right; equal waits also mean equal fates, and equal bounds for the
        abandoned calls, so only bounds and deadline flags are stored), and up
        to the first changed wait in the others, which :meth:`_settle` redoes.
        """
        bound, by_deadline, _, wait, clock = state
        d = self.dl_event
        remaining = np.maximum(0.0, self.dl_deadline_at - clock[self.dl_previous])
        sec, by, _, w = step(dl_keys, self.dl_duration, self.dl_completed, remaining)
        changed = w != wait[d]
        bound[d], by_deadline[d] = sec, by
        return np.unique(self.dl_row[changed]) if changed.any() else changed[:0].nonzero()[0]

    def _settle(self, step: _DeadlineStep, keys: np.ndarray, rows: np.ndarray, state: tuple[np.ndarray, ...]) -> None:
        """Iterate the episodes of sorted ``rows`` to the fixed point of clock → bounds → waits.

        A block ``[event, episode]`` of their events; ``cumsum`` down a column
        is the twin's sequential clock. An event's wait depends only on earlier
        waits, so each iteration fixes at least one more event: the loop ends
        within the block's depth, and its fixed point is the exact replay.
        """
        bound, by_deadline, abandoned, wait, clock = state
        depth = int(self.event_count[rows[0]])  # rows ascend, so the first is the longest
        column = np.arange(depth)[:, None]
        block = np.where(column < self.event_count[rows], self.offsets[column] + rows, bound.size - 1)
        duration, completed = self.event_duration[block], self.event_completed[block]
        block_keys = keys[block]
        is_call = self.event_call[block] >= 0
        start, deadline_at = self.arrival_sorted[rows], self.deadline_at_sorted[rows]
        w = wait[block]
        for _ in range(depth + 1):
            t = np.cumsum(np.vstack([start, w]), axis=0)
            remaining = np.maximum(0.0, deadline_at - t[:-1])
            sec, by, ab, new = step(block_keys, duration, completed, remaining, is_call)
            if np.array_equal(new, w):
                break
            w = new
        else:  # pragma: no cover - impossible by the argument above
            raise AssertionError("deadline settling did not reach its fixed point")
        bound[block], by_deadline[block], abandoned[block], wait[block], clock[block] = sec, by, ab, w, t[1:]

    def _finish(self, bound: np.ndarray, by_deadline: np.ndarray, abandoned: np.ndarray, wait: np.ndarray,
                clock: np.ndarray) -> Evaluation:
        """Zombies, loose workers, credits, wall times and silences from the settled event arrays."""
        hit = np.flatnonzero(abandoned[:-1])  # abandoned events: few
        calls = self.event_call[hit]
        ab_bound = bound[hit]
        zombie_hit = np.where(self.event_completed[hit], self.event_duration[hit] - ab_bound, np.inf)
        zombie = np.zeros(self.calls)
        zombie[calls] = zombie_hit
        loose = zombie_hit != 0  # the twin records a loose worker only while it runs
        start = clock[self._previous(hit[loose])] + ab_bound[loose]
        peak = metrics.peak_overlap(start, start + zombie_hit[loose])
        executed = ~(abandoned[self.read_event] | self.read_error)
        if hit.size:
            first = np.full(self.arrival_sorted.size, np.iinfo(np.intp).max, dtype=np.intp)
            np.minimum.at(first, self.event_row[hit], self.event_column[hit])
            abandoned_before = first[self.read_row] < self.read_column
        else:
            abandoned_before = np.zeros(self.read_event.size, dtype=bool)
        credited = Crediting.credited_lines_array(self.read_credits, executed, abandoned_before, self.read_requested)
        return Evaluation(self, bound=bound, by_deadline=by_deadline, abandoned=abandoned,
                          abandoned_calls=np.sort(calls), zombie=zombie, credited=credited,
                          wall_sorted=self._wall(clock), round_silence=self._round_silence(wait),
                          peak_loose_workers=peak, unbounded=False)

    def _evaluate_unbounded(self) -> Evaluation:
        """The pre-fix behaviour: nothing is abandoned; under "wedge" a censored call ends its episode."""
        wait = self.unbounded_wait
        clock = self.events.running_sums(self.arrival_sorted, wait)
        executed = self.unbounded_outcome[self.read_calls] == EXECUTED
        credited = Crediting.credited_lines_array(
            self.read_credits, executed, np.zeros(executed.size, dtype=bool), self.read_requested)
        nowhere = np.zeros(wait.size, dtype=bool)
        return Evaluation(self, bound=np.full(wait.size, np.nan), by_deadline=nowhere, abandoned=nowhere,
                          abandoned_calls=np.zeros(0, dtype=np.intp), zombie=np.zeros(self.calls), credited=credited,
                          wall_sorted=self._wall(clock), round_silence=self._round_silence(wait),
                          peak_loose_workers=0, unbounded=True)

    def _wall(self, clock: np.ndarray) -> np.ndarray:
        """Wall time per sorted row: the clock after its last event minus its arrival (0 without events)."""
        wall = np.zeros(self.arrival_sorted.size)
        n = self.last_event.size
        np.subtract(clock[self.last_event], self.arrival_sorted[:n], out=wall[:n])
        return wall

    def _round_silence(self, wait: np.ndarray) -> np.ndarray:
        """Silence of every round with calls (:attr:`rounds` order): the sum of its waits, in call order."""
        waits = wait[self.round_event]
        rounds = self.rounds
        silence = np.empty(len(rounds.order))
        for j, n in enumerate(rounds.active):
            slab = waits[rounds.offsets[j]:rounds.offsets[j] + n]
            if j == 0:
                silence[:n] = slab  # the twin's 0.0 + first wait is the first wait
            else:
                silence[:n] += slab
        return silence

    # -- results -----------------------------------------------------------
    def summary(self, policy: SupportsTimeoutFor | None = None, narrowing: Narrowing | None = None) -> dict[str, Any]:
        """:func:`reviewlab.metrics.summarize` of a replay, without building frames (for sweeps)."""
        return self.evaluate(policy, narrowing).summary()

    def summarize(self, ev: Evaluation) -> dict[str, Any]:
        """The summary of an :class:`Evaluation` of this corpus."""
        return ev.summary()

    def result(self, policy: SupportsTimeoutFor | None = None, narrowing: Narrowing | None = None) -> ReplayResult:
        """The full :class:`~reviewlab.replay.ReplayResult` (frames and summary) of one replay."""
        policy = policy if policy is not None else TimeoutPolicy.ouroboros()
        narrowing = narrowing or Narrowing()
        ev = self.evaluate(policy, narrowing)
        if self._string_columns is None:
            # The twin's dtype for these; immutable string arrays, so every frame may share them.
            ids = np.array(self.episode_ids or [""], dtype=object)[self.episode_index]
            self._string_columns = (pd.array(ids, dtype="str"), pd.array(self.tool_names, dtype="str"))
        episode_id, tool = self._string_columns
        bound_by = np.where(ev.by_deadline, "deadline", "unbounded" if ev.unbounded else "tool_timeout")
        calls = pd.DataFrame({
            "episode_id": episode_id, "round": self.round, "call_index": self.call_index, "tool": tool, "duration_sec": self.duration_sec, "completed": self.completed,
            "bound_sec": ev.bound_sec, "bound_by": bound_by.astype(object),
            "outcome": OUTCOMES[ev.outcome], "source_gap": GAPS[ev.gap],
            "requested_lines": self.requested_lines.astype(np.int64), "credited_lines": ev.credited_lines,
            "zombie_sec": ev.zombie_sec,
        }, columns=list(metrics.CALL_COLUMNS))
        calls["round"] = calls["round"].astype(np.int64)
        calls["call_index"] = calls["call_index"].astype(np.int64)
        base = pd.DataFrame({"episode_id": list(self.episode_ids), "slot_id": list(self.slot_ids),
                             "wall_sec": ev.wall_sec, "max_silence_sec": ev.max_silence_sec})
        episodes = metrics.episode_rows(calls, base)
        summary = metrics.summarize(calls, episodes, peak_loose_workers=ev.peak_loose_workers)
        return ReplayResult(calls, episodes, summary, engine="vectorized", policy=policy, narrowing=narrowing)


class _DeadlineStep:
    """One call's bound from the time left, by the shared rules: clamp (clamped keys), narrowing, fate, wait."""

    def __init__(self, policy: SupportsTimeoutFor, narrowing: Narrowing, tool_sec: np.ndarray,
                 clamps: np.ndarray | None) -> None:
        self.policy = policy
        self.narrowing = narrowing
        self.tool_sec = tool_sec
        self.clamps = clamps

    def __call__(self, keys: np.ndarray, duration: np.ndarray, completed: np.ndarray, remaining: np.ndarray,
                 is_call: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(bound, by_deadline, abandoned, wait)``; where ``is_call`` is False (a send) nothing is bounded."""
        sec = self.tool_sec.take(keys)
        if self.clamps is not None:
            assert isinstance(self.policy, TimeoutPolicy)
            sec = np.where(self.clamps.take(keys), self.policy.clamp_array(sec, remaining), sec)
        sec, by = self.narrowing.narrow_array(sec, remaining)
        if is_call is not None:
            sec = np.where(is_call, sec, np.inf)
            by &= is_call
        abandoned = abandons_array(duration, completed, sec)
        return sec, by, abandoned, np.where(abandoned, sec, duration)


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

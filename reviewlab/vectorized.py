"""Vectorized replay: NumPy over every call of every episode at once (no reviewer pool).

Lifecycle: :func:`compile_corpus` turns a corpus into a :class:`CompiledCorpus`
once; :meth:`CompiledCorpus.evaluate` replays it under one policy and
narrowing, as often as a sweep likes, without a Python object per call;
:meth:`~CompiledCorpus.summary` stops at the summary dict and
:meth:`~CompiledCorpus.result` builds the twin's frames.
:func:`replay_vectorized` is the ``engine="vectorized"`` entry of
:func:`reviewlab.replay.replay`.

Why most of a replay is known before the policy. An episode's clock is
``t = arrival`` plus, in event order, each model send and each call's wait; a
call that is not abandoned waits exactly its duration. So the *static* clock
(every wait = its duration) is compiled once, with the wall times, the round
silences and the time left before the deadline at every call it implies; under
a policy it is wrong only in episodes where some call's wait is not its
duration. One replay:

1. Static pass. Without a deadline a call's bound depends only on the policy,
   its tool and :meth:`TimeoutPolicy.args_key`: resolved once per key with
   :func:`~reviewlab.policy.resolve_bound`, looked up per call; fates by
   :func:`~reviewlab.receipts.abandons_array`.
2. Deadline pass (a narrowing that reads the clock, or a clamped tool): the
   calls of episodes with a deadline get their bounds from the static time
   left, by :meth:`TimeoutPolicy.clamp_array` and :meth:`Narrowing.narrow_array`.
3. Settling. Episodes in which a call was abandoned or a wait changed (few:
   in an episode where every wait is its duration the static clock, hence
   every bound above, is exact) are iterated to their fixed point on a small
   ``[event, episode]`` block: clock → bounds → waits. An event's wait
   depends only on earlier waits, so each iteration fixes at least one more
   event; it ends within the block's depth, in practice after two or three.

Invariants (the contract with the twin, briefing "Replay semantics"):

* Clocks are accumulated exactly like the twin's: ``t = arrival``, then one
  addition per event in order (column-wise running sums of
  :class:`PrefixLayout`, ``cumsum`` down a block column), so every float —
  time left, deadline bound, wall time, loose-worker start — is bit-identical
  to the twin's; a round's silence likewise adds its waits in call order.
* Bounds, clamps, fates and credits come from the shared rules only (above,
  and :meth:`~reviewlab.receipts.Crediting.credited_lines_array`); the summary
  is :func:`reviewlab.metrics.summarize_arrays`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

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
        """Per sorted row, ``start`` plus its increments one by one: the value after every item.

        The twin's ``t += x`` sequence, so the floats are the twin's.
        """
        out = np.empty(self.size)
        previous = start
        for j, n in enumerate(self.active):
            current = out[self.offsets[j]:self.offsets[j] + n]
            np.add(previous[:n], increments[self.offsets[j]:self.offsets[j] + n], out=current)
            previous = current
        return out


class Evaluation:
    """One replay of a compiled corpus (arrays are read-only views of its decisions).

    Per call (corpus order): ``bound_sec`` (NaN: unbounded or never started),
    ``by_deadline``, ``abandoned``, ``zombie_sec``; built on access:
    ``outcome`` (codes into ``OUTCOMES``), ``gap`` (codes into ``GAPS``),
    ``credited_lines``. Per episode (corpus order): ``wall_sec``; built on
    access: ``max_silence_sec``. Per round with calls: ``round_silence``.
    Across the corpus: ``peak_loose_workers``.
    """

    def __init__(self, corpus: CompiledCorpus, *, bound: np.ndarray, by_deadline: np.ndarray, abandoned: np.ndarray,
                 zombie: np.ndarray, credited: np.ndarray, wall: np.ndarray, round_silence: np.ndarray,
                 peak_loose_workers: int, unbounded: bool) -> None:
        self.corpus = corpus
        self.bound_sec = bound
        self.by_deadline = by_deadline
        self.abandoned = abandoned
        self.zombie_sec = zombie
        self.credited_read = credited  # per call of corpus.read_calls
        self.wall_sec = wall
        self.round_silence = round_silence
        self.peak_loose_workers = peak_loose_workers
        self.unbounded = unbounded

    @property
    def max_silence_sec(self) -> np.ndarray:
        """Longest round silence per episode (0 for an episode without calls)."""
        c = self.corpus
        out = np.zeros(len(c.episode_ids))
        if c.silence_starts.size:
            out[c.silence_episodes] = np.maximum.reduceat(self.round_silence, c.silence_starts)
        return out

    @property
    def gap(self) -> np.ndarray:
        if self.unbounded:
            return np.where(self.corpus.unbounded_wedge, 2, 0).astype(np.int8)
        return self.abandoned.astype(np.int8)

    @property
    def outcome(self) -> np.ndarray:
        if self.unbounded:
            return self.corpus.unbounded_outcome
        return (self.abandoned | self.corpus.status_error).astype(np.int8)  # ERROR = 1, EXECUTED = 0

    @property
    def credited_lines(self) -> np.ndarray:
        credited = np.zeros(self.corpus.calls, dtype=np.int64)
        credited[self.corpus.read_calls] = self.credited_read
        return credited

    def summary(self) -> dict[str, Any]:
        """:func:`reviewlab.metrics.summarize_arrays` of this replay.

        That function reads counts and sums of the per-call arrays (and the
        float sum of ``zombie_sec``, given whole, in call order) and quantiles
        and maxima of the per-episode ones. So the line counts are given for
        the calls that ask for lines only (every other call adds 0), and the
        silences per round (the longest round is the longest episode maximum;
        an episode without calls has 0, which no round is below).
        """
        c = self.corpus
        dispatched = c.unbounded_dispatched if self.unbounded else c.all_calls
        return metrics.summarize_arrays(
            dispatched=dispatched, abandoned=self.abandoned, zombie_sec=self.zombie_sec,
            bounded=~c.all_calls if self.unbounded else c.all_calls, by_deadline=self.by_deadline,
            requested_lines=c.read_requested, credited_lines=self.credited_read,
            wall_sec=self.wall_sec, max_silence_sec=self.round_silence, peak_loose_workers=self.peak_loose_workers)


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
    duration. Everything here is read-only once compiled.
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
        return int(self.duration_sec.size)

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
                    rows.append((e, r, tool, key, m, len(round_sizes), call.requested_lines, duration, completed,
                                 call.status == "error"))
                    self.call_args.append(args)
                    event_sec.append(duration)
                    index += 1
                    m += 1
                if rnd.calls:
                    round_sizes.append(len(rnd.calls))
            n_events.append(m)
        columns: list[Any] = list(zip(*rows, strict=True)) if rows else [()] * 10
        (self.episode_index, self.round, tool_code, self.key_code, self.call_column, self.call_round,
         self.requested_lines) = (np.array(c, dtype=np.intp) for c in columns[:7])
        self.duration_sec = np.array(columns[7], dtype=float)
        self.completed = np.array(columns[8], dtype=bool)
        self.status_error = np.array(columns[9], dtype=bool)
        n_calls = np.bincount(self.episode_index, minlength=len(episodes))
        self.call_index = np.arange(len(rows), dtype=np.intp) - (np.cumsum(n_calls) - n_calls)[self.episode_index]
        self.tools = list(tools)
        self.key_tools = [tool for tool, _ in keys]
        self.tool_names = np.array(self.tools or [""], dtype=object)[tool_code]
        self.all_calls = np.ones(len(rows), dtype=bool)
        self._compile_events(np.array(n_events, dtype=np.intp), np.array(event_sec, dtype=float))
        self._compile_rounds(np.array(round_sizes, dtype=np.intp))
        self._compile_deadlines()
        credits = np.array([Crediting.credits_tool(t) for t in self.tools] or [False], dtype=bool)[tool_code]
        self.read_calls = np.flatnonzero(self.requested_lines > 0)
        self.read_episode = self.episode_index[self.read_calls]
        self.read_requested = self.requested_lines[self.read_calls]
        self.read_credits = credits[self.read_calls]
        self.read_error = self.status_error[self.read_calls]
        self.read_first = np.searchsorted(self.read_episode, np.arange(len(episodes) + 1))
        # The credits when nothing is abandoned; a replay redoes only the episodes with an abandoned call.
        self.static_credited = Crediting.credited_lines_array(
            self.read_credits, ~self.read_error, np.zeros(self.read_calls.size, dtype=bool), self.read_requested)
        self._compile_unbounded()
        for value in vars(self).values():
            if isinstance(value, np.ndarray):
                value.flags.writeable = False

    def _compile_events(self, n_events: np.ndarray, event_sec: np.ndarray) -> None:
        """Every event in :class:`PrefixLayout` order; a send has key ``len(key_args)`` (never bounded)."""
        self.events = events = PrefixLayout.of(n_events)
        n = events.size
        episode = np.repeat(np.arange(n_events.size), n_events)
        column = np.arange(n) - (np.cumsum(n_events) - n_events)[episode]
        position = events.position(episode, column)
        self.spare = n
        self.offsets = np.asarray(events.offsets, dtype=np.intp)
        self.event_count = n_events[events.order]  # per sorted row
        self.arrival_sorted = self.arrival_sec[events.order]
        self.deadline_at_sorted = self.deadline_at_sec[events.order]
        self.call_row = events.rank[self.episode_index]
        call_event = self.offsets[self.call_column] + self.call_row
        self.event_duration = np.zeros(n + 1)
        self.event_duration[position] = event_sec
        self.event_completed = np.ones(n + 1, dtype=bool)
        self.event_completed[call_event] = self.completed
        self.event_key = np.full(n + 1, len(self.key_args), dtype=np.intp)
        self.event_key[call_event] = self.key_code
        self.event_call = np.full(n + 1, -1, dtype=np.intp)
        self.event_call[call_event] = np.arange(call_event.size)
        clock = events.running_sums(self.arrival_sorted, self.event_duration)
        self.static_clock_before = clock[self.offsets[self.call_column - 1] + self.call_row]  # a send precedes
        self.static_wall = self._wall(clock)

    def _wall(self, clock: np.ndarray) -> np.ndarray:
        """Wall time per episode (corpus order): the clock after its last event minus its arrival."""
        rows = self.events.active[0] if self.events.active else 0
        last = self.offsets[self.event_count[:rows] - 1] + np.arange(rows)
        wall = np.zeros(self.arrival_sec.size)
        wall[self.events.order[:rows]] = clock[last] - self.arrival_sorted[:rows]
        return wall

    def _compile_rounds(self, sizes: np.ndarray) -> None:
        """Rounds with calls (corpus order): where their calls are, and their silences when waits are durations."""
        starts = np.cumsum(sizes) - sizes
        self.round_size = sizes
        self.round_row = self.call_row[starts]
        self.round_column = self.call_column[starts]
        self.silence_episodes, self.silence_starts = np.unique(self.episode_index[starts], return_index=True)
        self.rounds = PrefixLayout.of(sizes)
        round_of_call = np.repeat(np.arange(sizes.size), sizes)
        self.round_call = np.empty(self.rounds.size, dtype=np.intp)
        self.round_call[self.rounds.position(round_of_call, np.arange(self.calls) - starts[round_of_call])] = (
            np.arange(self.calls))
        self.static_silence = self.round_silence(self.duration_sec)

    def round_silence(self, wait: np.ndarray) -> np.ndarray:
        """Every round's silence (rounds with calls, corpus order): its calls' waits added in call order."""
        waits = wait[self.round_call]
        silence = np.zeros(self.rounds.order.size)
        for j, n in enumerate(self.rounds.active):
            silence[:n] += waits[self.rounds.offsets[j]:self.rounds.offsets[j] + n]  # 0.0 + w is w
        return silence[self.rounds.rank]

    def _compile_deadlines(self) -> None:
        """The calls of episodes with a deadline, and the time each has left on the static clock."""
        dl = np.flatnonzero(~np.isnan(self.deadline_at_sec[self.episode_index]))
        self.dl_calls = dl
        self.dl_row = self.call_row[dl]
        self.dl_key = self.key_code[dl]
        self.dl_duration = self.duration_sec[dl]
        self.dl_completed = self.completed[dl]
        # The twin's max(0.0, deadline_at - t), with the static t.
        self.dl_remaining = np.maximum(0.0, self.deadline_at_sorted[self.dl_row] - self.static_clock_before[dl])

    def _compile_unbounded(self) -> None:
        """The pre-fix replay, which no policy changes: under "wedge" a censored call ends its episode."""
        wedge = np.zeros(self.calls, dtype=bool)
        withheld = np.zeros(self.calls, dtype=bool)
        wait = self.event_duration.copy()
        if self.censored == "wedge":
            censored = np.flatnonzero(~self.completed)
            first = np.full(len(self.episode_ids), np.iinfo(np.intp).max, dtype=np.intp)
            np.minimum.at(first, self.episode_index[censored], self.call_column[censored])
            ends_at = first[self.episode_index]
            wedge = ~self.completed & (self.call_column == ends_at)
            withheld = self.call_column > ends_at
            # The episode's log ends at the wedge: its later sends and calls take no time.
            ends_sorted = first[self.events.order]
            for j, n in enumerate(self.events.active):
                wait[self.offsets[j] + np.flatnonzero(ends_sorted[:n] < j)] = 0.0
        self.unbounded_wedge = wedge
        self.unbounded_dispatched = ~withheld
        self.unbounded_outcome = np.where(
            withheld, WITHHELD, np.where(wedge | self.status_error, ERROR, EXECUTED)).astype(np.int8)
        call_wait = np.where(withheld, 0.0, self.duration_sec)
        self.unbounded_wall = self._wall(self.events.running_sums(self.arrival_sorted, wait))
        self.unbounded_silence = self.round_silence(call_wait)

    # -- evaluation --------------------------------------------------------
    def _tables(self, policy: SupportsTimeoutFor, narrowing: Narrowing) -> _Tables:
        """The policy's tool timeouts, per key for a :class:`TimeoutPolicy`, else per call.

        A :class:`TimeoutPolicy` reads only the tool and ``args_key``. Any
        other policy object may read anything, so each call is its own key
        (its timeout still never depends on the clock: :func:`resolve_bound`
        gives such a policy no time left). The last key is the model send's.
        """
        if type(policy) is TimeoutPolicy:
            pairs = list(zip(self.key_tools, self.key_args, strict=True))
            call_keys, dl_keys, event_keys = self.key_code, self.dl_key, self.event_key
            clamps = np.array([policy.clamps(None, t, a) for t, a in pairs] + [False])
        else:
            pairs = list(zip(self.tool_names.tolist(), self.call_args, strict=True))
            call_keys, dl_keys = np.arange(self.calls), self.dl_calls
            event_keys = np.where(self.event_call >= 0, self.event_call, self.calls)
            clamps = np.zeros(len(pairs) + 1, dtype=bool)
        raw = [resolve_bound(policy, None, t, a, narrowing=_NO_NARROWING, remaining_sec=None).sec for t, a in pairs]
        tool_sec = np.array([*raw, np.inf], dtype=float)
        static, _ = narrowing.narrow_array(tool_sec, np.full(tool_sec.size, np.nan))  # no deadline
        clamped = bool(clamps.take(dl_keys).any()) if dl_keys.size else False
        step = _DeadlineStep(policy, narrowing, tool_sec, clamps if clamped else None)
        return _Tables(call_keys, dl_keys, event_keys, static, step, narrowing.mode in _READS_CLOCK or clamped)

    def evaluate(self, policy: SupportsTimeoutFor | None = None, narrowing: Narrowing | None = None) -> Evaluation:
        """Replay the corpus under ``policy`` and ``narrowing`` (defaults as :func:`reviewlab.replay.replay`)."""
        policy = policy if policy is not None else TimeoutPolicy.ouroboros()
        narrowing = narrowing or Narrowing()
        if narrowing.mode == "unbounded":
            return self._evaluate_unbounded()
        tables = self._tables(policy, narrowing)
        bound = tables.static.take(tables.call_keys)
        abandoned = abandons_array(self.duration_sec, self.completed, bound)
        by_deadline = np.zeros(self.calls, dtype=bool)
        unsettled = self.call_row[abandoned]  # the static clock is wrong after an abandoned call
        if tables.reads_clock and self.dl_calls.size:
            dl = self.dl_calls
            sec, by, ab, wait = tables.step(tables.dl_keys, self.dl_duration, self.dl_completed, self.dl_remaining)
            bound[dl], by_deadline[dl], abandoned[dl] = sec, by, ab
            # Exact wherever every wait of the episode is its duration; the rest is settled below.
            unsettled = np.concatenate([self.call_row[abandoned], self.dl_row[wait != self.dl_duration]])
        rows = np.unique(unsettled)
        counts = self.event_count[rows]  # non-increasing: rows ascend
        blocks, i = [], 0
        while i < rows.size:  # blocks of rows at most twice as long as each other: little padding
            j = max(i + 1, int(np.searchsorted(-counts, -(counts[i] // 2))))
            blocks.append(self._settle(tables, rows[i:j], bound, by_deadline, abandoned))
            i = j
        return self._finish(bound, by_deadline, abandoned, blocks)

    def _settle(self, tables: _Tables, rows: np.ndarray, bound: np.ndarray, by_deadline: np.ndarray,
                abandoned: np.ndarray) -> _Settled:
        """Replay the episodes of sorted ``rows`` exactly: iterate clock → bounds → waits to the fixed point.

        A block ``[event, episode]`` of their events, padded with the spare
        zero-length send; ``cumsum`` down a column is the twin's clock. Stores
        the calls' bounds, deadline flags and fates; returns the clocks and waits.
        """
        depth = int(self.event_count[rows[0]])  # rows ascend, so the first is the longest
        column = np.arange(depth)[:, None]
        block = np.where(column < self.event_count[rows], self.offsets[column] + rows, self.spare)
        duration, completed = self.event_duration[block], self.event_completed[block]
        keys, call = tables.event_keys[block], self.event_call[block]
        is_call = call >= 0
        calls = call[is_call]
        start = self.arrival_sorted[rows]
        # A send has no time left (NaN), so nothing narrows its infinite bound; nor does a missing deadline.
        deadline_at = np.where(is_call, self.deadline_at_sorted[rows], np.nan)
        wait = duration.copy()  # first guess: the waits decided so far (exact up to each first change)
        wait[is_call] = np.where(abandoned[calls], bound[calls], duration[is_call])
        clock = np.cumsum(np.vstack([start, wait]), axis=0)
        sec, by, ab, new = tables.step(keys, duration, completed, np.maximum(0.0, deadline_at - clock[:-1]))
        todo = np.flatnonzero((new != wait).any(axis=0))  # an episode whose waits held is exact: it drops out
        wait = new
        for _ in range(depth + 1):
            if not todo.size:
                break
            w = wait[:, todo]
            t = np.cumsum(np.vstack([start[todo], w]), axis=0)
            s, b, a, new = tables.step(keys[:, todo], duration[:, todo], completed[:, todo],
                                       np.maximum(0.0, deadline_at[:, todo] - t[:-1]))
            clock[:, todo], sec[:, todo], by[:, todo], ab[:, todo], wait[:, todo] = t, s, b, a, new
            todo = todo[(new != w).any(axis=0)]
        else:  # pragma: no cover - impossible: each iteration fixes at least one more event
            raise AssertionError("deadline settling did not reach its fixed point")
        bound[calls], by_deadline[calls], abandoned[calls] = sec[is_call], by[is_call], ab[is_call]
        return _Settled(rows, clock, wait)

    def _finish(self, bound: np.ndarray, by_deadline: np.ndarray, abandoned: np.ndarray,
                blocks: list[_Settled]) -> Evaluation:
        """Zombies, loose workers, credits, wall times and silences from the settled decisions."""
        hit = np.flatnonzero(abandoned)  # every abandoned call is in a settled episode
        zombie_hit = np.where(self.completed[hit], self.duration_sec[hit] - bound[hit], np.inf)
        zombie = np.zeros(self.calls)
        zombie[hit] = zombie_hit
        wall, silence, peak = self.static_wall, self.static_silence, 0
        if blocks:
            wall, silence = wall.copy(), silence.copy()
            starts, ends = [], []
            hit_row, hit_rounds = self.call_row[hit], np.unique(self.call_round[hit])
            for rows, clock, wait in blocks:
                wall[self.events.order[rows]] = clock[-1] - self.arrival_sorted[rows]
                mine = (hit_row >= rows[0]) & (hit_row <= rows[-1])  # a block is a run of the settled rows
                here = hit[mine]
                loose = zombie_hit[mine] != 0  # the twin records a loose worker only while it runs
                at = np.searchsorted(rows, hit_row[mine])
                start = clock[self.call_column[here], at][loose] + bound[here][loose]
                starts.append(start)
                ends.append(start + zombie_hit[mine][loose])
                rounds = hit_rounds[(self.round_row[hit_rounds] >= rows[0]) & (self.round_row[hit_rounds] <= rows[-1])]
                size = self.round_size[rounds]
                j = np.arange(int(size.max(initial=1)))[:, None]
                waits = wait[self.round_column[rounds] + np.minimum(j, size - 1),
                             np.searchsorted(rows, self.round_row[rounds])]
                silence[rounds] = np.cumsum(np.where(j < size, waits, 0.0), axis=0)[-1]
            peak = metrics.peak_overlap(np.concatenate(starts), np.concatenate(ends))
        credited = self.static_credited
        if hit.size:
            # Only reads in an episode with an abandoned call can differ from the static credits.
            episodes, at_first = np.unique(self.episode_index[hit], return_index=True)
            first, last = self.read_first[episodes], self.read_first[episodes + 1]
            size = last - first
            reads = np.repeat(first - np.cumsum(size) + size, size) + np.arange(int(size.sum()))
            calls = self.read_calls[reads]
            executed = ~(abandoned[calls] | self.read_error[reads])
            first_abandoned = np.repeat(hit[at_first], size)  # hit ascends: the episode's first abandoned call
            credited = credited.copy()
            credited[reads] = Crediting.credited_lines_array(
                self.read_credits[reads], executed, first_abandoned < calls, self.read_requested[reads])
        return Evaluation(self, bound=bound, by_deadline=by_deadline, abandoned=abandoned, zombie=zombie,
                          credited=credited, wall=wall, round_silence=silence, peak_loose_workers=peak,
                          unbounded=False)

    def _evaluate_unbounded(self) -> Evaluation:
        """The pre-fix behaviour: nothing is abandoned; under "wedge" a censored call ends its episode."""
        executed = self.unbounded_outcome[self.read_calls] == EXECUTED
        credited = Crediting.credited_lines_array(
            self.read_credits, executed, np.zeros(executed.size, dtype=bool), self.read_requested)
        nowhere = np.zeros(self.calls, dtype=bool)
        return Evaluation(self, bound=np.full(self.calls, np.nan), by_deadline=nowhere, abandoned=nowhere,
                          zombie=np.zeros(self.calls), credited=credited, wall=self.unbounded_wall,
                          round_silence=self.unbounded_silence, peak_loose_workers=0, unbounded=True)

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
            "episode_id": episode_id, "round": self.round.astype(np.int64),
            "call_index": self.call_index.astype(np.int64), "tool": tool, "duration_sec": self.duration_sec,
            "completed": self.completed, "bound_sec": ev.bound_sec, "bound_by": bound_by.astype(object),
            "outcome": OUTCOMES[ev.outcome], "source_gap": GAPS[ev.gap],
            "requested_lines": self.requested_lines.astype(np.int64), "credited_lines": ev.credited_lines,
            "zombie_sec": ev.zombie_sec,
        }, columns=list(metrics.CALL_COLUMNS))
        base = pd.DataFrame({"episode_id": list(self.episode_ids), "slot_id": list(self.slot_ids),
                             "wall_sec": ev.wall_sec, "max_silence_sec": ev.max_silence_sec})
        episodes = metrics.episode_rows(calls, base)
        summary = metrics.summarize(calls, episodes, peak_loose_workers=ev.peak_loose_workers)
        return ReplayResult(calls, episodes, summary, engine="vectorized", policy=policy, narrowing=narrowing)


class _DeadlineStep:
    """A call's bound from the time left, by the shared rules: clamp (clamped keys), narrowing, fate, wait."""

    def __init__(self, policy: SupportsTimeoutFor, narrowing: Narrowing, tool_sec: np.ndarray,
                 clamps: np.ndarray | None) -> None:
        self.policy = policy
        self.narrowing = narrowing
        self.tool_sec = tool_sec
        self.clamps = clamps

    def __call__(self, keys: np.ndarray, duration: np.ndarray, completed: np.ndarray,
                 remaining: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(bound, by_deadline, abandoned, wait)`` (NaN ``remaining``: no deadline)."""
        sec = self.tool_sec.take(keys)
        if self.clamps is not None:
            assert isinstance(self.policy, TimeoutPolicy)
            sec = np.where(self.clamps.take(keys), self.policy.clamp_array(sec, remaining), sec)
        sec, by = self.narrowing.narrow_array(sec, remaining)
        abandoned = abandons_array(duration, completed, sec)
        wait = duration.copy()  # an abandoned call waits its bound
        np.copyto(wait, sec, where=abandoned)
        return sec, by, abandoned, wait


@dataclass(frozen=True)
class _Tables:
    """One policy resolved for a corpus: keys per call / deadline call / event, static bounds, the clock step."""

    call_keys: np.ndarray
    dl_keys: np.ndarray
    event_keys: np.ndarray
    static: np.ndarray
    step: _DeadlineStep
    reads_clock: bool


class _Settled(NamedTuple):
    """The settled episodes: their sorted rows, block clock (row ``j``: before event ``j``) and waits."""

    rows: np.ndarray
    clock: np.ndarray
    wait: np.ndarray


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

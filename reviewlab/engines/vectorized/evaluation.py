"""One vectorized replay's decisions, as arrays: :class:`Evaluation` and the codes it uses.

Lifecycle: an :class:`Evaluation` is made by
:meth:`reviewlab.engines.vectorized.CompiledCorpus.evaluate` (the settling in
:mod:`reviewlab.engines.vectorized.settle`, or the policy-independent unbounded replay)
and only read afterwards: :meth:`Evaluation.summary` for a sweep,
:meth:`~reviewlab.engines.vectorized.CompiledCorpus.result` for the frames.

Invariants: outcomes are codes into :data:`OUTCOME_BY_CODE` (``EXECUTED, ERROR,
WITHHELD``) and source gaps codes into :data:`GAP_BY_CODE`; the per-call arrays are
in corpus order (episode order, then call order) and the per-episode ones in
episode order; the summary is :func:`reviewlab.core.metrics.summarize_arrays`,
the twin's summary to the bit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from reviewlab.core import metrics
from reviewlab.core.vocab import OUTCOMES, SOURCE_GAP_ABANDONED, SOURCE_GAP_WEDGED

CompiledCorpus = Any
"""The corpus type of :mod:`reviewlab.engines.vectorized` (its package imports this module,
so naming it here would close an import cycle)."""

__all__ = ["ERROR", "EXECUTED", "GAP_BY_CODE", "OUTCOME_BY_CODE", "WITHHELD", "Evaluation"]

# The outcomes a replayed call can have, by code: executed, error, withheld (never refused).
OUTCOME_BY_CODE = np.array([OUTCOMES[0], OUTCOMES[1], OUTCOMES[3]], dtype=object)
EXECUTED, ERROR, WITHHELD = 0, 1, 2
GAP_BY_CODE = np.array(["", SOURCE_GAP_ABANDONED, SOURCE_GAP_WEDGED], dtype=object)


class Evaluation:
    """One replay of a compiled corpus (arrays are read-only views of its decisions).

    Per call (corpus order): ``bound_sec`` (NaN: unbounded or never started),
    ``by_deadline``, ``abandoned``, ``zombie_sec``, ``by_idle``; built on access:
    ``outcome`` (codes into ``OUTCOME_BY_CODE``), ``gap`` (codes into ``GAP_BY_CODE``),
    ``credited_lines``. Per episode (corpus order): ``wall_sec``; built on
    access: ``max_silence_sec``. Per round with calls: ``round_silence``.
    Across the corpus: ``peak_loose_workers``. The call timing
    (:data:`~reviewlab.core.metrics.CALL_TIMING_COLUMNS`: ``start_sec``,
    ``wait_sec``) is built on access only, for the frames: a sweep's
    :meth:`summary` never pays for it. ``settled`` keeps the clocks of the
    episodes whose static clock was wrong (:mod:`reviewlab.engines.vectorized.settle`).
    """

    def __init__(
        self,
        corpus: CompiledCorpus,
        *,
        bound: np.ndarray,
        by_deadline: np.ndarray,
        abandoned: np.ndarray,
        zombie: np.ndarray,
        credited: np.ndarray,
        wall: np.ndarray,
        round_silence: np.ndarray,
        peak_loose_workers: int,
        unbounded: bool,
        settled: Sequence[Any] = (),  # settle.Settled (settle imports this module)
        by_idle: np.ndarray | None = None,
    ) -> None:
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
        self.settled = settled
        self.by_idle = by_idle
        """Per call, whether its idle timeout fired (``None``: no idle timeout fired at all)."""

    @property
    def max_silence_sec(self) -> np.ndarray:
        """Longest round silence per episode (0 for an episode without calls)."""
        c = self.corpus
        out = np.zeros(len(c.episode_ids))
        if c.silence_starts.size:
            out[c.silence_episodes] = np.maximum.reduceat(self.round_silence, c.silence_starts)
        return out

    @property
    def wait_sec(self) -> np.ndarray:
        """How long each call's episode waited on it: the bound if abandoned, 0 if withheld, else
        its duration."""
        c = self.corpus
        if self.unbounded:
            return c.unbounded_wait
        return np.where(self.abandoned, self.bound_sec, c.duration_sec)

    @property
    def start_sec(self) -> np.ndarray:
        """When each call was dispatched, from its episode's arrival (withheld: when the log ended).

        The episode's clock before the call minus its arrival, as the twin's
        ``t - arrival``: the static clock, except in settled episodes, whose
        block clocks (row ``j``: before event ``j``) replace it.
        """
        c = self.corpus
        clock = c.unbounded_clock_before if self.unbounded else c.static_clock_before
        if self.settled:
            clock = clock.copy()
            block_of = np.full(c.event_count.size, -1, dtype=np.intp)  # per sorted row
            for number, (rows, _, _) in enumerate(self.settled):
                block_of[rows] = number
            call_block = block_of[c.call_row]
            for number, (rows, block_clock, _) in enumerate(self.settled):
                mine = np.flatnonzero(call_block == number)
                clock[mine] = block_clock[
                    c.call_column[mine], np.searchsorted(rows, c.call_row[mine])
                ]
        return clock - c.arrival_sec[c.episode_index]

    @property
    def bound_by(self) -> np.ndarray:
        """Per call, which term fired (the frames' ``bound_by``)."""
        by = np.where(
            self.by_deadline, "deadline", "unbounded" if self.unbounded else "tool_timeout"
        )
        if self.by_idle is not None:
            by = np.where(self.by_idle, "idle", by)
        return by.astype(object)

    @property
    def gap(self) -> np.ndarray:
        """Per call, the source-gap code (index into :data:`GAP_BY_CODE`)."""
        if self.unbounded:
            return np.where(self.corpus.unbounded_wedge, 2, 0).astype(np.int8)
        return self.abandoned.astype(np.int8)

    @property
    def outcome(self) -> np.ndarray:
        """Per call, the outcome code (index into :data:`OUTCOME_BY_CODE`)."""
        if self.unbounded:
            return self.corpus.unbounded_outcome
        return (self.abandoned | self.corpus.status_error).astype(
            np.int8
        )  # ERROR = 1, EXECUTED = 0

    @property
    def credited_lines(self) -> np.ndarray:
        """Per call, the read lines credited (0 for every call that is not a credited read)."""
        credited = np.zeros(self.corpus.calls, dtype=np.int64)
        credited[self.corpus.read_calls] = self.credited_read
        return credited

    def summary(self) -> dict[str, Any]:
        """:func:`reviewlab.core.metrics.summarize_arrays` of this replay.

        That function reads counts and sums of the per-call arrays (and the
        float sum of ``zombie_sec``, given whole, in call order) and quantiles
        and maxima of the per-episode ones. So the line counts are given for
        the calls that ask for lines only (every other call adds 0), and the
        silences per round (the longest round is the longest episode maximum;
        an episode without calls has 0, which no round is below).
        """
        return metrics.summarize_arrays(**self.summary_arguments())

    def summary_arguments(self) -> dict[str, Any]:
        """The arguments :meth:`summary` gives :func:`~reviewlab.core.metrics.summarize_arrays`.

        A partitioned sweep (:mod:`reviewlab.analysis.partitioned`) reduces them per
        partition and merges them into the same call, so both answers are one definition.
        """
        c = self.corpus
        dispatched = c.unbounded_dispatched if self.unbounded else c.all_calls
        executed = self.outcome[c.read_calls] == EXECUTED
        timeout_lost = metrics.timeout_lost_lines(
            c.read_requested, self.credited_read, self.abandoned[c.read_calls], executed
        )
        return dict(
            dispatched=dispatched,
            abandoned=self.abandoned,
            zombie_sec=self.zombie_sec,
            bounded=~c.all_calls if self.unbounded else c.all_calls,
            by_deadline=self.by_deadline,
            requested_lines=c.read_requested,
            credited_lines=self.credited_read,
            timeout_lost_lines=timeout_lost,
            wall_sec=self.wall_sec,
            max_silence_sec=self.round_silence,
            peak_loose_workers=self.peak_loose_workers,
        )

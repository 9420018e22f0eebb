"""One vectorized replay's decisions, as arrays: :class:`Evaluation` and the codes it uses.

Lifecycle: an :class:`Evaluation` is made by
:meth:`reviewlab.engines.vectorized.CompiledCorpus.evaluate` (the settling in
:mod:`reviewlab.engines.vectorized._settle`, or the policy-independent unbounded replay)
and only read afterwards: :meth:`Evaluation.summary` for a sweep,
:meth:`~reviewlab.engines.vectorized.CompiledCorpus.result` for the frames.

Invariants: outcomes are codes into :data:`OUTCOME_BY_CODE` (``EXECUTED, ERROR,
WITHHELD``) and source gaps codes into :data:`GAP_BY_CODE`; the per-call arrays are
in corpus order (episode order, then call order) and the per-episode ones in
episode order; the summary is :func:`reviewlab.core._metrics.summarize_arrays`,
the twin's summary to the bit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from reviewlab.core import _metrics as metrics
from reviewlab.core._quantiles import ReplacedValues
from reviewlab.core._vocab import (
    OUTCOME_ERROR,
    OUTCOME_EXECUTED,
    OUTCOME_WITHHELD,
    SOURCE_GAP_ABANDONED,
    SOURCE_GAP_WEDGED,
)
from reviewlab.engines.vectorized._decisions import Decisions, Sparse

CompiledCorpus = Any
"""The corpus type of :mod:`reviewlab.engines.vectorized` (its package imports this module,
so naming it here would close an import cycle)."""

# The outcomes a replayed call can have, by code: executed, error, withheld (never refused).
OUTCOME_BY_CODE = np.array([OUTCOME_EXECUTED, OUTCOME_ERROR, OUTCOME_WITHHELD], dtype=object)
EXECUTED, ERROR, WITHHELD = 0, 1, 2
GAP_BY_CODE = np.array(["", SOURCE_GAP_ABANDONED, SOURCE_GAP_WEDGED], dtype=object)


REPLACED_WALLS_FROM = 65_536
"""Episodes from which a sparse replay's summary reads its wall quantiles from the sorted
static walls and its changes instead of a corpus-sized array (below it the array is cheaper)."""


class Evaluation:
    """One replay of a compiled corpus (arrays are read-only views of its decisions).

    Per call (corpus order): ``bound_sec`` (NaN: unbounded or never started),
    ``by_deadline``, ``abandoned``, ``zombie_sec``, ``by_idle``; built on access:
    ``outcome`` (codes into ``OUTCOME_BY_CODE``), ``gap`` (codes into ``GAP_BY_CODE``),
    ``credited_lines``. Per episode (corpus order): ``wall_sec``; built on
    access: ``max_silence_sec``. Per round with calls: ``round_silence``.
    Across the corpus: ``peak_loose_workers``. The call timing
    (:data:`~reviewlab.core._metrics.CALL_TIMING_COLUMNS`: ``start_sec``,
    ``wait_sec``) is built on access only, for the frames: a sweep's
    :meth:`summary` never pays for it. ``settled`` keeps the clocks of the
    episodes whose static clock was wrong (:mod:`reviewlab.engines.vectorized._settle`).

    Made from :class:`Decisions` (the arrays whole) or, on the sparse path (:meth:`sparse`),
    from :class:`Sparse` parts: its per-call
    and per-round arrays are built from them on first access, and :meth:`summary` reads
    their counts and sums, so a sweep builds only the zombie seconds per point.
    """

    def __init__(
        self,
        corpus: CompiledCorpus,
        *,
        decisions: Decisions | None = None,
        parts: Sparse | None = None,
        peak_loose_workers: int,
        unbounded: bool,
        settled: Sequence[Any] = (),  # settle.Settled (settle imports this module)
        wall_changes: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> None:
        if (decisions is None) == (parts is None):
            raise ValueError("Evaluation: give the decisions whole or as sparse parts, not both")
        self.corpus = corpus
        d = decisions  # the sparse path builds each array from its parts on first read
        self._bound: np.ndarray | None = d.bound if d else None
        self._by_deadline: np.ndarray | None = d.by_deadline if d else None
        self._abandoned: np.ndarray | None = d.abandoned if d else None
        self._zombie: np.ndarray | None = d.zombie if d else None
        self._credited: np.ndarray | None = d.credited if d else None
        self._wall: np.ndarray | None = d.wall if d else None
        self.wall_changes = wall_changes
        """Without ``wall``: the settled episodes (corpus positions) and their walls, every
        other episode's being its static one."""
        self._round_silence: np.ndarray | None = d.round_silence if d else None
        self.peak_loose_workers = peak_loose_workers
        self.unbounded = unbounded
        self.settled = settled
        self.by_idle = d.by_idle if d else None
        """Per call, whether its idle timeout fired (``None``: no idle timeout fired at all)."""
        self.parts = parts
        """The sparse path's parts (``None``: the arrays were given whole)."""

    @classmethod
    def sparse(
        cls,
        corpus: CompiledCorpus,
        parts: Sparse,
        *,
        wall_changes: tuple[np.ndarray, np.ndarray],
        peak_loose_workers: int,
        settled: Sequence[Any],
    ) -> Evaluation:
        """A bounded replay given as its :class:`Sparse` changes to the static replay (and
        its walls as the settled episodes' changes to the static walls)."""
        return cls(
            corpus,
            parts=parts,
            peak_loose_workers=peak_loose_workers,
            unbounded=False,
            settled=settled,
            wall_changes=wall_changes,
        )

    @property
    def wall_sec(self) -> np.ndarray:
        """Per episode (corpus order), its wall time."""
        if self._wall is None:
            assert self.wall_changes is not None
            self._wall = self.corpus.walls_with(*self.wall_changes)
        return self._wall

    def walls(self) -> np.ndarray | ReplacedValues:
        """The wall times as the summary reads them: the array when it is built, else the
        static walls with the settled episodes' changes (the same quantiles and maximum,
        without a corpus-sized array)."""
        if self._wall is not None or self.wall_changes is None:
            return self.wall_sec
        changed, walls = self.wall_changes
        c = self.corpus
        if c.static_wall.size < REPLACED_WALLS_FROM or 8 * changed.size > c.static_wall.size:
            return self.wall_sec  # a small corpus, or many changes: the array is as cheap
        return ReplacedValues(c.static_wall_sorted, c.static_wall[changed], walls)

    def _parts(self) -> Sparse:
        assert self.parts is not None
        return self.parts

    @property
    def bound_sec(self) -> np.ndarray:
        """Per call, its bound (NaN: unbounded or never started)."""
        if self._bound is None:
            p, c = self._parts(), self.corpus
            bound = p.static.take(p.call_keys)
            if p.dl is not None:
                bound[c.dl_calls] = p.dl()[0]
            bound[p.calls] = p.bound
            self._bound = bound
        return self._bound

    @property
    def by_deadline(self) -> np.ndarray:
        """Per call, whether the deadline set its bound."""
        if self._by_deadline is None:
            p, c = self._parts(), self.corpus
            by = np.zeros(c.calls, dtype=bool)
            if p.dl is not None:
                by[c.dl_calls] = p.dl()[1]
            by[p.calls] = p.by_deadline
            self._by_deadline = by
        return self._by_deadline

    @property
    def abandoned(self) -> np.ndarray:
        """Per call, whether it was abandoned at its bound."""
        if self._abandoned is None:
            abandoned = np.zeros(self.corpus.calls, dtype=bool)
            abandoned[self._parts().hit] = True
            self._abandoned = abandoned
        return self._abandoned

    @property
    def zombie_sec(self) -> np.ndarray:
        """Per call, how long its loose worker ran on after the bound (``inf``: never
        returned)."""
        if self._zombie is None:
            p = self._parts()
            zombie = np.zeros(self.corpus.calls)
            zombie[p.hit] = p.zombie_hit
            self._zombie = zombie
        return self._zombie

    @property
    def credited_read(self) -> np.ndarray:
        """Per call of ``corpus.read_calls``, its credited lines."""
        if self._credited is None:
            p = self._parts()
            credited = self.corpus.static_credited.copy()
            credited[p.reads] = p.credited
            self._credited = credited
        return self._credited

    @property
    def round_silence(self) -> np.ndarray:
        """Per round with calls (corpus order), its silence: its calls' waits added in order."""
        if self._round_silence is None:
            p = self._parts()
            silence = self.corpus.static_silence.copy()
            silence[p.rounds] = p.round_silence
            self._round_silence = silence
        return self._round_silence

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
            for number, (rows, *_) in enumerate(self.settled):
                block_of[rows] = number
            call_block = block_of[c.call_row]
            for number, (rows, block_clock, *_) in enumerate(self.settled):
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
        """:func:`reviewlab.core._metrics.summarize_arrays` of this replay.

        That function reads counts and sums of the per-call arrays (and the
        float sum of ``zombie_sec``, given whole, in call order) and quantiles
        and maxima of the per-episode ones. So the line counts are given for
        the calls that ask for lines only (every other call adds 0), and the
        silences per round (the longest round is the longest episode maximum;
        an episode without calls has 0, which no round is below).

        A sparse replay whose zombie seconds were never read writes them into a scratch array
        of zeros of the corpus's (:meth:`CompiledCorpus.zombie_scratch`) and clears them after
        the summary: no corpus-sized allocation per point.
        """
        if self.parts is None or self._zombie is not None:
            return metrics.summarize_arrays(self.summary_arguments(walls=True))
        scratch = self.corpus.zombie_scratch()
        hit = self.parts.hit  # type: ignore[union-attr]
        zombie_hit = self.parts.zombie_hit  # type: ignore[union-attr]
        wedged = ~np.isfinite(zombie_hit)
        try:
            # The wedged zombies as 0 and counted: summarize_arrays then sums once.
            scratch[hit] = np.where(wedged, 0.0, zombie_hit)
            arguments = self.summary_arguments(zombie=scratch, walls=True)
            return metrics.summarize_arrays(arguments, wedged_zombies=int(np.count_nonzero(wedged)))
        finally:
            scratch[hit] = 0.0
            self.corpus.release_scratch(scratch)

    def summary_arguments(
        self, zombie: np.ndarray | None = None, walls: bool = False
    ) -> metrics.SummaryArrays:
        """The arrays :meth:`summary` gives :func:`~reviewlab.core._metrics.summarize_arrays`.

        A partitioned sweep (:mod:`reviewlab.analysis._partitioned`) reduces them per
        partition and merges them into the same call, so both answers are one definition.
        A sparse replay gives the boolean arguments as arrays with its exact counts of true
        values, the line counts as their exact integer sums and the silences as their
        maximum (the only things the summary reads of them); the zombie seconds and wall
        times whole, in corpus order (a float sum and quantiles). ``zombie``: an array holding
        the zombie seconds to give instead of building them (:meth:`summary`'s scratch);
        ``walls``: the wall times as :meth:`walls` gives them (not necessarily an array).
        """
        c = self.corpus
        if self.parts is not None:
            p = self.parts
            return metrics.SummaryArrays(
                dispatched=c.all_calls,
                abandoned=np.ones(p.hit.size, dtype=bool),
                zombie_sec=self.zombie_sec if zombie is None else zombie,
                bounded=c.all_calls,
                by_deadline=np.ones(p.by_deadline_count, dtype=bool),
                requested_lines=np.array([c.requested_total], dtype=np.int64),
                credited_lines=np.array([p.credited_sum], dtype=np.int64),
                timeout_lost_lines=np.array([p.timeout_lost_sum], dtype=np.int64),
                wall_sec=self.walls() if walls else self.wall_sec,
                max_silence_sec=np.zeros(0) if p.silence_max is None else np.array([p.silence_max]),
                peak_loose_workers=self.peak_loose_workers,
            )
        dispatched = c.unbounded_dispatched if self.unbounded else c.all_calls
        executed = self.outcome[c.read_calls] == EXECUTED
        timeout_lost = metrics.timeout_lost_lines(
            c.read_requested, self.credited_read, self.abandoned[c.read_calls], executed
        )
        return metrics.SummaryArrays(
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

"""What one partition contributes to one grid point's summary: fixed-size partials.

Worker side: :func:`evaluate_points` replays a chunk of points on the worker's compiled
partition and keeps, per point, a :class:`PointState` (it stays on the worker as a Dask
future): the exact :class:`Totals`, the partition's pieces of the corpus-wide zombie sum
(:mod:`._pairwise`), its wall times as sorted keys (:mod:`._select`) and its loose-worker
events (:mod:`._overlap`). :func:`answer_points` answers one pass's requests from those states.

Client side: a :class:`PointMerge` per point folds the partitions' answers in as they arrive
(nothing per partition is kept but the zombie pieces, ``O(log calls)`` numbers each), asks for
the next pass until the wall order statistics and the loose-worker peak are known, and gives
the summary through :func:`reviewlab.core._metrics.summary_from_totals`, the one definition of
the rates. Every figure is the in-process sweep's to the bit: counts and line sums are
integers, maxima are maxima, the quantiles are NumPy's interpolation of exact order
statistics, the zombie sum is NumPy's own pairwise sum reassembled, the peak is exact.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from reviewlab.core import _metrics as metrics
from reviewlab.core._quantiles import interpolate, quantile_ranks
from reviewlab.engines.cluster._keys import Cell, float_keys
from reviewlab.engines.cluster._merge import CellSums
from reviewlab.engines.cluster._overlap import (
    SUMMARY_COLUMNS,
    LooseEvents,
    PeakSearch,
    cell_summary,
)
from reviewlab.engines.cluster._pairwise import Pieces, partition_pieces, sum_of_pieces
from reviewlab.engines.cluster._select import (
    OrderStatistics,
    Request,
    cell_histogram,
    cell_values,
)


@dataclass
class Totals:
    """A partition's exact counts, integer sums and maxima for one point (``None``: no value)."""

    episodes: int = 0
    calls: int = 0
    dispatched: int = 0
    abandoned: int = 0
    bounded: int = 0
    by_deadline: int = 0
    hedges: int = 0
    requested_lines: int = 0
    credited_lines: int = 0
    timeout_lost_lines: int = 0
    wedged_zombies: int = 0
    wall_max_sec: float | None = None
    max_silence_sec: float | None = None

    def add(self, other: Totals) -> None:
        """Fold ``other`` in: sums add, maxima take the larger."""
        for f in fields(self):
            mine, theirs = getattr(self, f.name), getattr(other, f.name)
            if f.name.endswith("_sec"):
                if theirs is not None:
                    setattr(self, f.name, theirs if mine is None else max(mine, theirs))
            else:
                setattr(self, f.name, mine + theirs)


@dataclass
class PointState:
    """One point replayed on one partition, kept on the worker between passes."""

    totals: Totals
    zombie: Pieces
    wall_keys: np.ndarray
    loose: LooseEvents
    extra: Any = None
    """What the caller's ``extra`` function made of this replay (sent on the first pass)."""


@dataclass
class PointRequests:
    """What one pass asks of every partition about one point."""

    walls: list[Request] = field(default_factory=list)
    loose: list[Cell] = field(default_factory=list)
    first: bool = False
    """Also send the totals and the zombie pieces (the first pass)."""


@dataclass
class PointAnswer:
    """One partition's answer to :class:`PointRequests`."""

    walls: dict[Request, Any]
    loose: dict[Cell, tuple[np.ndarray, dict[str, np.ndarray]]]
    totals: Totals | None = None
    zombie: Pieces | None = None
    extra: Any = None


def loose_intervals(c: Any, ev: Any) -> tuple[np.ndarray, np.ndarray]:
    """Loose workers of the evaluation ``ev`` of the compiled corpus ``c`` on the absolute
    clock, as the settling step records them.

    A loose worker starts when its call's bound passes (the call's clock plus the bound) and
    runs for its zombie seconds; the clocks are the static clock or, in settled episodes, the
    settled block's (as :attr:`Evaluation.start_sec` reads them, without the arrival). A
    sparse replay's abandoned calls all lie in settled episodes, so their bounds are the
    settled decisions (no corpus-sized bound array is built).
    """
    if ev.unbounded:
        return np.zeros(0), np.zeros(0)
    parts = ev.parts
    if parts is not None:
        running = parts.zombie_hit != 0
        hit, zombie = parts.hit[running], parts.zombie_hit[running]
        order = np.argsort(parts.calls, kind="stable")
        bound = parts.bound[order[np.searchsorted(parts.calls, hit, sorter=order)]]
    else:
        hit = np.flatnonzero(ev.abandoned & (ev.zombie_sec != 0))
        zombie, bound = ev.zombie_sec[hit], ev.bound_sec[hit]
    if not hit.size:
        return np.zeros(0), np.zeros(0)
    clock = c.static_clock_before[hit].copy()
    block_of = np.full(c.event_count.size, -1, dtype=np.intp)
    for number, (rows, *_) in enumerate(ev.settled):
        block_of[rows] = number
    rows_of_hit = c.call_row[hit]
    for number, (rows, block_clock, *_) in enumerate(ev.settled):
        mine = np.flatnonzero(block_of[rows_of_hit] == number)
        clock[mine] = block_clock[
            c.call_column[hit[mine]], np.searchsorted(rows, rows_of_hit[mine])
        ]
    start = clock + bound
    return start, start + zombie


def sorted_walls(c: Any, ev: Any) -> np.ndarray:
    """The evaluation's wall times, ascending: a sparse replay's from the corpus's sorted
    static walls with its few changed episodes merged in (no sort of the whole array)."""
    if ev.wall_changes is None:
        return np.sort(np.asarray(ev.wall_sec, dtype=float))
    changed, walls = ev.wall_changes
    base = c.static_wall_sorted
    if not changed.size:
        return np.asarray(base, dtype=float)
    removed = np.sort(c.static_wall[changed])
    values, counts = np.unique(removed, return_counts=True)
    starts = np.searchsorted(base, values, side="left")
    keep = np.ones(base.size, dtype=bool)
    # One copy of each removed value leaves: the first copies of its run in the sorted base.
    keep[
        np.repeat(starts, counts)
        + (np.arange(removed.size) - np.repeat(np.cumsum(counts) - counts, counts))
    ] = False
    kept = base[keep]
    added = np.sort(np.asarray(walls, dtype=float))
    return np.insert(kept, np.searchsorted(kept, added), added)


def _state(
    c: Any,
    policy: Any,
    offset: int,
    total_calls: int,
    extra: Callable[[Any, Any, Any], Any] | None = None,
    extra_arg: Any = None,
) -> PointState:
    ev = c.evaluate(policy)
    arguments = ev.summary_arguments(walls=True)  # the walls as the summary reads them
    start, end = loose_intervals(c, ev)
    if metrics.peak_overlap(start, end) != arguments.peak_loose_workers:
        raise RuntimeError(
            "loose workers: the intervals derived for the cluster merge disagree with the "
            "engine's peak (a change in the settling step?)"
        )
    zombie = np.asarray(arguments.zombie_sec, dtype=float)
    finite = np.isfinite(zombie)
    wall = sorted_walls(c, ev)
    silence = np.asarray(arguments.max_silence_sec, dtype=float)
    totals = Totals(
        episodes=int(wall.size),
        calls=int(zombie.size),
        dispatched=int(np.count_nonzero(arguments.dispatched)),
        abandoned=int(np.count_nonzero(arguments.abandoned)),
        bounded=int(np.count_nonzero(arguments.bounded)),
        by_deadline=int(np.count_nonzero(arguments.by_deadline)),
        hedges=0 if arguments.hedged is None else int(np.count_nonzero(arguments.hedged)),
        requested_lines=int(np.sum(arguments.requested_lines)),
        credited_lines=int(np.sum(arguments.credited_lines)),
        timeout_lost_lines=int(np.sum(arguments.timeout_lost_lines)),
        wedged_zombies=int(zombie.size - np.count_nonzero(finite)),
        wall_max_sec=float(wall[-1]) if wall.size else None,
        max_silence_sec=float(silence.max()) if silence.size else None,
    )
    # The in-process summary sums the zombie seconds with the wedged ones as 0.
    pieces = partition_pieces(np.where(finite, zombie, 0.0), offset, total_calls)
    made = None if extra is None else extra(c, ev, extra_arg)
    return PointState(totals, pieces, float_keys(wall), LooseEvents(start, end), made)


def evaluate_points(
    c: Any,
    policies: Sequence[Any],
    offset: int,
    total_calls: int,
    extra: Callable[[Any, Any, Any], Any] | None = None,
    extra_arg: Any = None,
) -> list[PointState]:
    """Replay each policy on the compiled partition ``c``, which holds calls
    ``[offset, offset + calls)`` of the corpus's ``total_calls`` (a worker task).
    ``extra(c, evaluation, extra_arg)``: a fixed-size partial of the caller's own, made from
    the same replay and sent with the first pass."""
    return [_state(c, policy, offset, total_calls, extra, extra_arg) for policy in policies]


def answer_points(
    states: Sequence[PointState], requests: Sequence[PointRequests | None]
) -> list[PointAnswer | None]:
    """One pass's answers of this partition, one per point (``None``: nothing asked)."""
    out: list[PointAnswer | None] = []
    for state, asked in zip(states, requests, strict=True):
        if asked is None:
            out.append(None)
            continue
        walls: dict[Request, Any] = {}
        for kind, cell in asked.walls:
            walls[(kind, cell)] = (
                cell_histogram(state.wall_keys, cell)
                if kind == "hist"
                else cell_values(state.wall_keys, cell)
            )
        loose = {cell: cell_summary(state.loose, cell) for cell in asked.loose}
        first = asked.first
        out.append(
            PointAnswer(
                walls,
                loose,
                state.totals if first else None,
                state.zombie if first else None,
                state.extra if first else None,
            )
        )
    return out


class PointMerge:
    """The client's merge of one point over every partition (see the module docstring)."""

    def __init__(self, episodes: int, total_calls: int) -> None:
        self.total_calls = total_calls
        self.plan = quantile_ranks(episodes, metrics.WALL_QUANTILES) if episodes else []
        ranks = {rank for below, above, _ in self.plan for rank in (below, above)}
        self.walls = OrderStatistics(episodes, ranks)
        self.peak = PeakSearch()
        self.totals = Totals()
        self.pieces: list[Pieces] = []
        self.extras: dict[int, Any] = {}
        """Each partition's ``extra`` partial, by partition number."""
        self._asked: PointRequests | None = None
        self._walls: dict[Request, Any] = {}
        self._loose: dict[Cell, CellSums] = {}

    def requests(self, first: bool = False) -> PointRequests | None:
        """What the next pass asks (``None``: the point is done)."""
        if not first and self.walls.done and self.peak.done:
            self._asked = None
            return None
        asked = PointRequests(
            self.walls.requests(), self.peak.requests() if not self.peak.done else [], first
        )
        self._asked = asked
        self._walls = {r: (CellSums(("count",)) if r[0] == "hist" else []) for r in asked.walls}
        self._loose = {cell: CellSums(SUMMARY_COLUMNS) for cell in asked.loose}
        return asked

    def take(self, answer: PointAnswer, partition: int = 0) -> None:
        """Fold in one partition's answer to the current pass."""
        if answer.extra is not None:
            self.extras[partition] = answer.extra
        if answer.totals is not None:
            self.totals.add(answer.totals)
        if answer.zombie is not None:
            self.pieces.append(answer.zombie)
        for request, got in answer.walls.items():
            merged = self._walls[request]
            if isinstance(merged, CellSums):
                numbers, counts = got
                merged.add(numbers, count=counts)
            elif len(got):
                merged.append(got)
        for cell, (numbers, columns) in answer.loose.items():
            self._loose[cell].add(numbers, **columns)

    def close_pass(self) -> None:
        """Every partition has answered the current pass: narrow the searches."""
        if self._asked is None:
            return
        if self._asked.walls:
            self.walls.feed(self._walls)
        if self._asked.loose:
            self.peak.feed(self._loose)
        self._walls, self._loose = {}, {}

    def summary(self) -> dict[str, Any]:
        """The point's summary (every search done)."""
        t = self.totals
        stats = self.walls.values()
        return metrics.summary_from_totals(
            metrics.SummaryTotals(
                episodes=t.episodes,
                calls=t.calls,
                dispatched=t.dispatched,
                abandoned=t.abandoned,
                bounded=t.bounded,
                by_deadline=t.by_deadline,
                requested_lines=t.requested_lines,
                credited_lines=t.credited_lines,
                timeout_lost_lines=t.timeout_lost_lines,
                wall_quantiles=interpolate(self.plan, stats) if self.plan else (0.0, 0.0, 0.0),
                wall_max_sec=0.0 if t.wall_max_sec is None else t.wall_max_sec,
                max_silence_sec=0.0 if t.max_silence_sec is None else t.max_silence_sec,
                zombie_finite_sec=sum_of_pieces(self.pieces, self.total_calls),
                wedged_zombies=t.wedged_zombies,
                peak_loose_workers=self.peak.best,
                hedges=t.hedges,
            )
        )

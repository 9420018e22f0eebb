"""What a partition's worker keeps and answers for the cluster tuner, and how answers merge.

Lifecycle: a worker compiles its partition and keeps its recorded observations
(:class:`PartitionTuning`, via :func:`observe_partition`), tells the client only counts
(:class:`PartitionHead`), hands one tool's calls to the worker profiling it (:class:`ToolSlice`),
learns which calls the loosest timeouts abandon (:func:`with_loosest`), and answers each
replayed point with a fixed-size :class:`BudgetPartial` (a ratio's :class:`Moments`, counts).
The client merges moments with :func:`merge_ratio`.

Invariants: everything a worker sends is fixed-size per tool, never per episode or call;
merged moments give :func:`~reviewlab.analysis._budgets.ratio_upper`'s figures over the whole
corpus, to rounding. The client side: :mod:`reviewlab.analysis._cluster_tune`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

import numpy as np

from reviewlab.analysis._profiles import DurationProfile, ProfileSettings, profile_tool
from reviewlab.core import _metrics as metrics
from reviewlab.core._policy import Policy
from reviewlab.engines.cluster._connect import register_sizes
from reviewlab.engines.vectorized._evaluation import EXECUTED, WITHHELD


class Moments(NamedTuple):
    """One partition's sums for a ratio ``Σx / Σd`` over episodes: ``n`` episodes, ``Σx``,
    ``Σd``, and about the partition's own ratio ``r_p``: ``Σ(x − r_p·d)²``, ``Σ(x − r_p·d)·d``
    and ``Σd²``."""

    n: int
    x: float
    d: float
    residual_squares: float
    residual_cross: float
    d_squares: float

    @classmethod
    def of(cls, x: np.ndarray, d: np.ndarray) -> Moments:
        """The moments of per-episode numerators ``x`` and denominators ``d``."""
        x = np.asarray(x, dtype=float)
        d = np.asarray(d, dtype=float)
        total_x, total_d = float(x.sum()), float(d.sum())
        r = total_x / total_d if total_d > 0 else 0.0
        residual = x - r * d
        return cls(
            int(x.size),
            total_x,
            total_d,
            float(np.dot(residual, residual)),
            float(np.dot(residual, d)),
            float(np.dot(d, d)),
        )


def merge_ratio(parts: Sequence[Moments], z: float) -> tuple[float, float]:
    """``(ratio, upper bound)`` over every partition's episodes, as
    :func:`~reviewlab.analysis._budgets.ratio_upper` gives it over the whole corpus: each
    partition's residuals about its own ratio are moved to the corpus's ratio exactly
    (``x − r·d = (x − r_p·d) + (r_p − r)·d``)."""
    total = sum(p.d for p in parts)
    if total <= 0:
        return 0.0, 0.0
    ratio = sum(p.x for p in parts) / total
    n = sum(p.n for p in parts)
    squares = 0.0
    for p in parts:
        shift = (p.x / p.d if p.d > 0 else 0.0) - ratio
        squares += p.residual_squares + 2.0 * shift * p.residual_cross + shift * shift * p.d_squares
    squares = max(squares, 0.0)
    se = math.sqrt(n / (n - 1) * squares) / total if n > 1 else 0.0
    return ratio, ratio + z * se


@dataclass(frozen=True)
class PartitionTuning:
    """One partition's recorded observations, kept on its worker for the tuner."""

    episodes: int
    requested_lines: int
    tools: tuple[str, ...]
    """The partition's tools, by their code in :attr:`tool_code`."""
    tool_code: np.ndarray
    duration_sec: np.ndarray
    completed: np.ndarray
    exposure_lines: np.ndarray
    loosest_abandoned: np.ndarray | None = None
    """Calls the loosest timeouts abandon (set by
    :meth:`~reviewlab.analysis._cluster_tune.ClusterBudgetEvaluator.start`)."""


class PartitionHead(NamedTuple):
    """What the client learns of a partition's observations: counts only."""

    episodes: int
    calls: int
    requested_lines: int
    tools: tuple[str, ...]


def observe_partition(wedge: Any) -> PartitionTuning:
    """A partition's :class:`PartitionTuning` from its ``wedge`` compile (a worker task)."""
    from reviewlab.engines._corpus import CallObservations

    register_sizes(PartitionTuning)
    observed = CallObservations.of(wedge)
    return PartitionTuning(
        episodes=observed.episodes,
        requested_lines=int(np.sum(observed.requested_lines, dtype=np.int64)),
        tools=observed.tools,
        tool_code=observed.tool_code,
        duration_sec=observed.duration_sec,
        completed=observed.completed,
        exposure_lines=observed.exposure_lines(),
    )


def head_of(state: PartitionTuning) -> PartitionHead:
    """A partition's :class:`PartitionHead` (a worker task)."""
    return PartitionHead(
        state.episodes, int(state.tool_code.size), state.requested_lines, state.tools
    )


class ToolSlice(NamedTuple):
    """One tool's calls in one partition: what its profile reads."""

    duration_sec: np.ndarray
    completed: np.ndarray
    exposure_lines: int


def slice_tool(state: PartitionTuning, tool: str) -> ToolSlice:
    """``tool``'s calls in one partition (a worker task)."""
    if tool not in state.tools:
        return ToolSlice(np.zeros(0), np.zeros(0, dtype=bool), 0)
    mine = state.tool_code == state.tools.index(tool)
    return ToolSlice(
        state.duration_sec[mine],
        state.completed[mine],
        int(np.sum(state.exposure_lines[mine], dtype=np.int64)),
    )


def profile_slices(tool: str, settings: ProfileSettings, *slices: ToolSlice) -> DurationProfile:
    """One tool's profile from its slices of every partition (a worker task)."""
    return profile_tool(
        tool,
        np.concatenate([s.duration_sec for s in slices]),
        np.concatenate([s.completed for s in slices]),
        float(sum(s.exposure_lines for s in slices)),
        settings,
    )


def with_loosest(compiled: Any, state: PartitionTuning, policy: Policy) -> PartitionTuning:
    """``state`` knowing which calls ``policy`` (the loosest timeouts) abandons (a worker
    task)."""
    ev = compiled.evaluate(policy)
    register_sizes(PartitionTuning)
    return replace(state, loosest_abandoned=np.asarray(ev.abandoned, dtype=bool).copy())


@dataclass(frozen=True)
class BudgetPartial:
    """One partition's share of one point's budgets (fixed size: a few numbers per tool)."""

    coverage: Moments
    """Timeout-lost lines over requested lines, per episode."""
    abandoned: Moments
    """Abandoned calls over dispatched calls, per episode."""
    added: Moments
    """Calls abandoned that the loosest timeouts do not abandon, over dispatched calls."""
    tool_added: Mapping[str, Moments]
    """Per tool: its added abandoned calls over its calls, per episode."""
    abandoned_calls: int
    tool_abandoned: Mapping[str, int]
    tool_completed_abandoned: Mapping[str, int]


def budget_partial(c: Any, ev: Any, state: PartitionTuning) -> BudgetPartial:
    """The :class:`BudgetPartial` of the replay ``ev`` of the compiled partition ``c`` (a
    worker task's ``extra``)."""
    n = len(c.episode_ids)
    episode = np.asarray(c.episode_index)
    outcome = ev.outcome
    abandoned = np.asarray(ev.abandoned, dtype=bool)
    lost = metrics.timeout_lost_lines(
        c.requested_lines, ev.credited_lines, abandoned, outcome == EXECUTED
    )
    dispatched = np.bincount(episode, weights=outcome != WITHHELD, minlength=n)
    requested = np.bincount(episode, weights=c.requested_lines, minlength=n)
    loosest = state.loosest_abandoned
    added = abandoned & ~loosest if loosest is not None else np.zeros_like(abandoned)
    codes = np.asarray(c.tool_code)
    tool_added: dict[str, Moments] = {}
    tool_abandoned: dict[str, int] = {}
    tool_completed: dict[str, int] = {}
    for code, tool in enumerate(c.tools):
        mine = codes == code
        if not mine.any():
            continue
        tool_added[tool] = Moments.of(
            np.bincount(episode[mine], weights=added[mine], minlength=n),
            np.bincount(episode[mine], minlength=n),
        )
        tool_abandoned[tool] = int(np.count_nonzero(abandoned & mine))
        tool_completed[tool] = int(np.count_nonzero(abandoned & mine & state.completed))
    return BudgetPartial(
        coverage=Moments.of(np.bincount(episode, weights=lost, minlength=n), requested),
        abandoned=Moments.of(np.bincount(episode, weights=abandoned, minlength=n), dispatched),
        added=Moments.of(np.bincount(episode, weights=added, minlength=n), dispatched),
        tool_added=tool_added,
        abandoned_calls=int(np.count_nonzero(abandoned)),
        tool_abandoned=tool_abandoned,
        tool_completed_abandoned=tool_completed,
    )

"""The metric definitions every engine shares (docs/metrics.md).

Engines (the real episode, the SimPy twin, the vectorized replay) produce one row per call
and one row per episode; every metric is computed here from those frames, so a rate means the
same thing whichever engine produced it. The column lists are named once:
:data:`CALL_COLUMNS` then the engine's timing :data:`CALL_TIMING_COLUMNS`
(:data:`ENGINE_CALL_COLUMNS`, with :data:`CALL_DTYPES`), to which
:func:`reviewlab.engines._result.assemble` appends :data:`CALL_DERIVED_COLUMNS`;
:data:`EPISODE_COLUMNS`; :data:`SUMMARY_KEYS` (the summary's figures, with their labels and
units, are declared in :mod:`reviewlab.core._metric_names`, which loads no NumPy).

Invariants: timeout coverage loss is exactly 0 when nothing is abandoned; infinite wall times,
silences and zombie seconds (a wedge) stay ``math.inf`` and quantiles over them are not NaN
(:func:`quantiles`). Every metric and column is defined in docs/metrics.md, "The summary",
"The call frame" and "The episode frame".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from reviewlab.core._quantiles import ReplacedValues, quantiles
from reviewlab.core._vocab import (
    OUTCOME_EXECUTED,
    OUTCOMES_ANSWERED,
    SOURCE_GAP_ABANDONED,
    SOURCE_GAPS_HELD_BACK,
)

CALL_COLUMNS = (
    "episode_id",
    "round",
    "call_index",
    "tool",
    "duration_sec",
    "completed",
    "bound_sec",
    "bound_by",
    "outcome",
    "source_gap",
    "requested_lines",
    "credited_lines",
    "zombie_sec",
)
CALL_TIMING_COLUMNS = ("start_sec", "wait_sec")
"""The engine's timing of each call, after :data:`CALL_COLUMNS` (see the module docstring)."""
ENGINE_CALL_COLUMNS = CALL_COLUMNS + CALL_TIMING_COLUMNS
"""The call frame an engine builds, before :func:`reviewlab.engines._result.assemble` appends
:data:`CALL_DERIVED_COLUMNS` (and a hedging replay :data:`CALL_HEDGE_COLUMNS`)."""
CALL_DTYPES: dict[str, Any] = {
    "episode_id": object,
    "round": np.int64,
    "call_index": np.int64,
    "tool": object,
    "duration_sec": float,
    "completed": bool,
    "bound_sec": float,
    "bound_by": object,
    "outcome": object,
    "source_gap": object,
    "requested_lines": np.int64,
    "credited_lines": np.int64,
    "zombie_sec": float,
    "start_sec": float,
    "wait_sec": float,
}
"""The dtype of every column of :data:`CALL_COLUMNS` and :data:`CALL_TIMING_COLUMNS`."""
CALL_DERIVED_COLUMNS = ("timeout_lost_lines",)
"""Appended by :func:`reviewlab.engines._result.assemble`: lines lost because of abandonment."""
CALL_FRAME_COLUMNS = CALL_COLUMNS + CALL_TIMING_COLUMNS + CALL_DERIVED_COLUMNS
"""Every column of a replay's call frame, in order."""
CALL_HEDGE_COLUMNS = ("hedged",)
"""In a replay whose policy hedges, between :data:`CALL_TIMING_COLUMNS` and
:data:`CALL_DERIVED_COLUMNS`: whether the call's second attempt started."""
EPISODE_COLUMNS = (
    "episode_id",
    "slot_id",
    "wall_sec",
    "max_silence_sec",
    "calls",
    "abandoned_calls",
    "requested_lines",
    "credited_lines",
    "coverage_loss",
    "timeout_lost_lines",
    "timeout_coverage_loss",
)

WALL_QUANTILES = (0.50, 0.95, 0.99)
"""The wall-time quantiles of the summary (``wall_p50_sec``, ``wall_p95_sec``, ``wall_p99_sec``)."""


def coverage_loss(requested: float, credited: float) -> float:
    """1 − credited / requested; 0 when nothing was requested."""
    return 0.0 if requested <= 0 else 1.0 - credited / requested


def timeout_lost_lines(
    requested_lines: np.ndarray,
    credited_lines: np.ndarray,
    abandoned: np.ndarray,
    executed: np.ndarray,
    skipped: np.ndarray | None = None,
) -> np.ndarray:
    """Per call, the lines lost because of abandonment (docs/metrics.md).

    A call's lost lines are ``requested − credited``. They are the timeout's
    doing when the call was abandoned, or when it executed (returned inside its
    bound, without error) and was still not credited — the sticky rule withheld
    its extent after an earlier abandonment — or when the model never issued it
    because an abandonment made it give up on the call's target (``skipped``,
    the ``skip_target`` reaction), or when a breaker withheld it after repeated
    abandonments (``skipped`` covers both:
    :data:`~reviewlab.core._vocab.SOURCE_GAPS_HELD_BACK`). Lines lost by a call
    that failed by itself, never returned under the unbounded policy, or never
    started because the log ended are inherent, not counted here.
    """
    lost = np.asarray(requested_lines, dtype=np.int64) - np.asarray(credited_lines, dtype=np.int64)
    caused = np.asarray(abandoned, dtype=bool) | np.asarray(executed, dtype=bool)
    if skipped is not None:
        caused = caused | np.asarray(skipped, dtype=bool)
    return np.where(caused, lost, 0).astype(np.int64)


def peak_overlap(starts: Sequence[float] | np.ndarray, ends: Sequence[float] | np.ndarray) -> int:
    """The most intervals ``[start, end)`` open at one instant (``end`` may be ``inf``)."""
    starts = np.asarray(starts, dtype=float)
    ends = np.asarray(ends, dtype=float)
    if starts.size == 0:
        return 0
    times = np.concatenate([starts, ends])
    # At equal times an end (-1) is processed before a start (+1): [a, b) then [b, c) never overlap.
    deltas = np.concatenate([np.ones(starts.size), -np.ones(ends.size)])
    order = np.lexsort((deltas, times))
    return int(np.max(np.cumsum(deltas[order])))


def episode_rows(calls: pd.DataFrame, episodes: pd.DataFrame) -> pd.DataFrame:
    """Fill the per-episode aggregates (calls, abandoned calls, lines, coverage loss) from
    ``calls``.

    ``episodes`` must hold ``episode_id, slot_id, wall_sec, max_silence_sec``;
    episodes without calls get zeros.
    """
    dispatched = calls["outcome"].isin(OUTCOMES_ANSWERED)
    abandoned = calls["source_gap"].eq(SOURCE_GAP_ABANDONED)
    grouped = (
        pd.DataFrame(
            {
                "episode_id": calls["episode_id"],
                "calls": dispatched.astype(np.int64),
                "abandoned_calls": abandoned.astype(np.int64),
                "requested_lines": calls["requested_lines"].astype(np.int64),
                "credited_lines": calls["credited_lines"].astype(np.int64),
                "timeout_lost_lines": timeout_lost_array(calls),
            }
        )
        .groupby("episode_id", sort=False)
        .sum()
    )
    out = episodes[["episode_id", "slot_id", "wall_sec", "max_silence_sec"]].merge(
        grouped, how="left", left_on="episode_id", right_index=True
    )
    counts = ("calls", "abandoned_calls", "requested_lines", "credited_lines", "timeout_lost_lines")
    for column in counts:
        out[column] = out[column].fillna(0).astype(np.int64)
    requested = out["requested_lines"].to_numpy(dtype=float)
    credited = out["credited_lines"].to_numpy(dtype=float)
    timeout = out["timeout_lost_lines"].to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out["coverage_loss"] = np.where(requested > 0, 1.0 - credited / requested, 0.0)
        out["timeout_coverage_loss"] = np.where(requested > 0, timeout / requested, 0.0)
    return out[list(EPISODE_COLUMNS)].reset_index(drop=True)


def timeout_lost_array(calls: pd.DataFrame) -> np.ndarray:
    """:func:`timeout_lost_lines` of a call frame (the column if present, else from its columns)."""
    if "timeout_lost_lines" in calls:
        return calls["timeout_lost_lines"].to_numpy(dtype=np.int64)
    return timeout_lost_lines(
        calls["requested_lines"].to_numpy(),
        calls["credited_lines"].to_numpy(),
        calls["source_gap"].eq(SOURCE_GAP_ABANDONED).to_numpy(),
        calls["outcome"].eq(OUTCOME_EXECUTED).to_numpy(),
        calls["source_gap"].isin(SOURCE_GAPS_HELD_BACK).to_numpy(),
    )


def summarize(
    calls: pd.DataFrame, episodes: pd.DataFrame, *, peak_loose_workers: int
) -> dict[str, Any]:
    """The summary dict every engine returns (keys in :data:`SUMMARY_KEYS`)."""
    bound_by = calls["bound_by"]
    arrays = SummaryArrays(
        dispatched=calls["outcome"].isin(OUTCOMES_ANSWERED).to_numpy(),
        abandoned=calls["source_gap"].eq(SOURCE_GAP_ABANDONED).to_numpy(),
        zombie_sec=calls["zombie_sec"].to_numpy(dtype=float),
        bounded=~bound_by.eq("unbounded").to_numpy(),
        by_deadline=bound_by.eq("deadline").to_numpy(),
        requested_lines=calls["requested_lines"].to_numpy(),
        credited_lines=calls["credited_lines"].to_numpy(),
        timeout_lost_lines=timeout_lost_array(calls),
        wall_sec=episodes["wall_sec"].to_numpy(dtype=float),
        max_silence_sec=episodes["max_silence_sec"].to_numpy(dtype=float),
        peak_loose_workers=peak_loose_workers,
        hedged=calls["hedged"].to_numpy(dtype=bool) if "hedged" in calls else None,
    )
    return summarize_arrays(arrays)


@dataclass(frozen=True)
class SummaryArrays:
    """What the summary reads of a replay, as arrays: per call (in call-frame row order) the
    call frame's columns reduced to what is counted or summed, per episode the walls and
    silences, and the loose-worker peak. An engine that holds these builds no frame."""

    dispatched: np.ndarray
    """Whether the call was dispatched (``outcome`` executed or error)."""
    abandoned: np.ndarray
    """Whether it was abandoned at its bound."""
    zombie_sec: np.ndarray
    """Its loose worker's seconds after the bound (``inf``: never returns)."""
    bounded: np.ndarray
    """Whether it had a bound (``bound_by`` not ``"unbounded"``)."""
    by_deadline: np.ndarray
    """Whether the deadline set its bound."""
    requested_lines: np.ndarray
    credited_lines: np.ndarray
    timeout_lost_lines: np.ndarray
    wall_sec: np.ndarray | ReplacedValues
    """Per episode (a sparse replay: the static walls with its changes)."""
    max_silence_sec: np.ndarray
    """Per episode, or any array whose maximum is the longest silence."""
    peak_loose_workers: int
    hedged: np.ndarray | None = None
    """Per call, whether its second attempt started (``None``: the policy hedges nothing)."""


def summarize_arrays(arrays: SummaryArrays, *, wedged_zombies: int | None = None) -> dict[str, Any]:
    """:func:`summarize` from per-call arrays (in call-frame row order) and per-episode arrays.

    The one place the summary is defined; :func:`summarize` feeds it the frames'
    columns, sweeps feed it arrays directly so no frame is built per policy point.
    ``zombie_finite_sec`` is the sum of ``zombie_sec`` in row order with every zombie that
    never returns (not finite) counted as 0. ``wedged_zombies``: a caller that has already
    written those zombies as 0 into ``zombie_sec`` gives their count here (one pass instead
    of three; the same figures).
    """
    zombie = np.ascontiguousarray(arrays.zombie_sec, dtype=float)
    zombie_finite = float(zombie.sum())
    if wedged_zombies is not None:  # the wedged ones are already 0 in zombie_sec
        wedged = int(wedged_zombies)
    elif math.isfinite(zombie_finite):  # nothing wedged (an inf or NaN would show in the sum)
        wedged = 0
    else:
        finite = np.isfinite(zombie)
        wedged = int(zombie.size - np.count_nonzero(finite))
        zombie_finite = float(np.where(finite, zombie, 0.0).sum())
    # A sparse replay gives its walls as the static ones with its changes (the same quantiles).
    wall_sec = arrays.wall_sec
    wall = wall_sec if isinstance(wall_sec, ReplacedValues) else np.asarray(wall_sec, dtype=float)
    silence = np.asarray(arrays.max_silence_sec, dtype=float)
    totals = SummaryTotals(
        episodes=int(wall.size),
        calls=int(zombie.size),
        dispatched=int(np.count_nonzero(arrays.dispatched)),
        abandoned=int(np.count_nonzero(arrays.abandoned)),
        bounded=int(np.count_nonzero(arrays.bounded)),
        by_deadline=int(np.count_nonzero(arrays.by_deadline)),
        requested_lines=np.sum(arrays.requested_lines),
        credited_lines=np.sum(arrays.credited_lines),
        timeout_lost_lines=np.sum(arrays.timeout_lost_lines),
        wall_quantiles=quantiles(wall, WALL_QUANTILES),
        wall_max_sec=float(wall.max()) if wall.size else 0.0,
        max_silence_sec=float(silence.max()) if silence.size else 0.0,
        zombie_finite_sec=zombie_finite,
        wedged_zombies=wedged,
        peak_loose_workers=int(arrays.peak_loose_workers),
        hedges=0 if arrays.hedged is None else int(np.count_nonzero(arrays.hedged)),
    )
    return summary_from_totals(totals)


@dataclass(frozen=True)
class SummaryTotals:
    """The totals :func:`summarize_arrays` reduces its arrays to, and a sweep over partitions
    merges (:mod:`reviewlab.analysis._partitioned`): counts, integer line sums, the wall
    quantiles at :data:`WALL_QUANTILES` and the maxima, the finite zombie seconds and the count
    of zombies that never return. Line counts may be NumPy scalars (their sums); they are read
    as floats."""

    episodes: int
    calls: int
    dispatched: int
    abandoned: int
    bounded: int
    by_deadline: int
    requested_lines: float
    credited_lines: float
    timeout_lost_lines: float
    wall_quantiles: Sequence[float]
    wall_max_sec: float
    max_silence_sec: float
    zombie_finite_sec: float
    wedged_zombies: int
    peak_loose_workers: int
    hedges: int


def summary_from_totals(totals: SummaryTotals) -> dict[str, Any]:
    """The summary (keys in :data:`SUMMARY_KEYS`) from its totals.

    The rates are defined here once; a sweep over partitions on a cluster
    (:mod:`reviewlab.analysis._partitioned`) merges per-partition totals and calls it too.
    """
    t = totals
    requested = float(t.requested_lines)
    credited = float(t.credited_lines)
    timeout_lost = float(t.timeout_lost_lines)
    dispatched, bounded, hedges = t.dispatched, t.bounded, t.hedges
    wedged_zombies, zombie_finite_sec = t.wedged_zombies, t.zombie_finite_sec
    p50, p95, p99 = t.wall_quantiles
    return {
        "episodes": int(t.episodes),
        "calls": int(t.calls),
        "abandoned_call_rate": int(t.abandoned) / dispatched if dispatched else 0.0,
        "coverage_loss_rate": coverage_loss(requested, credited),
        "timeout_coverage_loss_rate": timeout_lost / requested if requested > 0 else 0.0,
        # The rest of the loss; computed as a difference of line counts so the two parts add up.
        "inherent_coverage_loss_rate": (requested - credited - timeout_lost) / requested
        if requested > 0
        else 0.0,
        "wall_p50_sec": p50,
        "wall_p95_sec": p95,
        "wall_p99_sec": p99,
        "wall_max_sec": t.wall_max_sec,
        "max_silence_sec": t.max_silence_sec,
        "zombie_sec": math.inf if wedged_zombies else zombie_finite_sec,
        "zombie_finite_sec": zombie_finite_sec,
        "wedged_zombies": int(wedged_zombies),
        "peak_loose_workers": int(t.peak_loose_workers),
        "deadline_bound_share": int(t.by_deadline) / bounded if bounded else 0.0,
        "hedges": int(hedges),
        "extra_call_share": hedges / dispatched if dispatched else 0.0,
    }


def is_finite_number(value: Any) -> bool:
    """Whether ``value`` is an int or float that is neither infinite nor NaN."""
    return isinstance(value, int | float) and math.isfinite(value)

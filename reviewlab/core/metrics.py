"""The metric definitions every engine shares (design §5).

Engines (the real episode, the SimPy twin, the vectorized replay) produce one
row per call and one row per episode; everything below is computed from those
frames, so a rate means the same thing whichever engine produced it.

* abandoned-call rate: abandoned calls / dispatched calls (calls that started;
  refused and withheld calls never started).
* coverage-loss rate: 1 − credited read lines / read lines asked for (0 when
  nothing was asked for).
* episode wall time: p50, p95, p99 and max of ``wall_sec``.
* longest silence: the longest time between two model sends of one episode
  (``max_silence_sec``).
* zombie seconds: how long loose workers keep running after their call was
  abandoned (a censored call replayed as a wedge never returns: its zombie time
  is infinite and is counted in ``wedged_zombies`` rather than summed).
* peak loose workers: the most abandoned workers still running at one instant.
* deadline-bound share: bounded calls whose bound the deadline set / bounded calls.

Every replay engine's call frame holds :data:`CALL_COLUMNS` followed by the
engine's own timing of each call, :data:`CALL_TIMING_COLUMNS` (no metric below
reads them; charts lay calls out with them instead of re-deriving the replay):

* ``start_sec``: when the call was dispatched, in seconds from the episode's
  *arrival* (so a pool run's queue wait is included). A withheld call never
  started: its ``start_sec`` is the moment the episode's log ended.
* ``wait_sec``: how long the episode waited on the call: its bound for an
  abandoned call, 0 for a withheld one, else the time it actually took (in a
  worker-thread pool, thread queueing included).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "CALL_COLUMNS",
    "CALL_TIMING_COLUMNS",
    "EPISODE_COLUMNS",
    "SUMMARY_KEYS",
    "episode_rows",
    "peak_overlap",
    "per_slot",
    "per_tool",
    "summarize",
    "summarize_arrays",
]

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
)
SUMMARY_KEYS = (
    "episodes",
    "calls",
    "abandoned_call_rate",
    "coverage_loss_rate",
    "wall_p50_sec",
    "wall_p95_sec",
    "wall_p99_sec",
    "wall_max_sec",
    "max_silence_sec",
    "zombie_sec",
    "wedged_zombies",
    "peak_loose_workers",
    "deadline_bound_share",
)

_DISPATCHED = ("executed", "error")


def coverage_loss(requested: float, credited: float) -> float:
    """1 − credited / requested; 0 when nothing was requested."""
    return 0.0 if requested <= 0 else 1.0 - credited / requested


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
    """Fill the per-episode aggregates (calls, abandoned calls, lines, coverage loss) from ``calls``.

    ``episodes`` must hold ``episode_id, slot_id, wall_sec, max_silence_sec``;
    episodes without calls get zeros.
    """
    dispatched = calls["outcome"].isin(_DISPATCHED)
    abandoned = calls["source_gap"].eq("native_tool_abandoned")
    grouped = (
        pd.DataFrame(
            {
                "episode_id": calls["episode_id"],
                "calls": dispatched.astype(np.int64),
                "abandoned_calls": abandoned.astype(np.int64),
                "requested_lines": calls["requested_lines"].astype(np.int64),
                "credited_lines": calls["credited_lines"].astype(np.int64),
            }
        )
        .groupby("episode_id", sort=False)
        .sum()
    )
    out = episodes[["episode_id", "slot_id", "wall_sec", "max_silence_sec"]].merge(
        grouped, how="left", left_on="episode_id", right_index=True
    )
    for column in ("calls", "abandoned_calls", "requested_lines", "credited_lines"):
        out[column] = out[column].fillna(0).astype(np.int64)
    requested = out["requested_lines"].to_numpy(dtype=float)
    credited = out["credited_lines"].to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out["coverage_loss"] = np.where(requested > 0, 1.0 - credited / requested, 0.0)
    return out[list(EPISODE_COLUMNS)].reset_index(drop=True)


def _quantile(values: np.ndarray, q: float) -> float:
    return float(np.quantile(values, q)) if values.size else 0.0


def summarize(
    calls: pd.DataFrame, episodes: pd.DataFrame, *, peak_loose_workers: int
) -> dict[str, Any]:
    """The summary dict every engine returns (keys in :data:`SUMMARY_KEYS`)."""
    bound_by = calls["bound_by"]
    return summarize_arrays(
        dispatched=calls["outcome"].isin(_DISPATCHED).to_numpy(),
        abandoned=calls["source_gap"].eq("native_tool_abandoned").to_numpy(),
        zombie_sec=calls["zombie_sec"].to_numpy(dtype=float),
        bounded=bound_by.isin(("tool_timeout", "deadline")).to_numpy(),
        by_deadline=bound_by.eq("deadline").to_numpy(),
        requested_lines=calls["requested_lines"].to_numpy(),
        credited_lines=calls["credited_lines"].to_numpy(),
        wall_sec=episodes["wall_sec"].to_numpy(dtype=float),
        max_silence_sec=episodes["max_silence_sec"].to_numpy(dtype=float),
        peak_loose_workers=peak_loose_workers,
    )


def summarize_arrays(
    *,
    dispatched: np.ndarray,
    abandoned: np.ndarray,
    zombie_sec: np.ndarray,
    bounded: np.ndarray,
    by_deadline: np.ndarray,
    requested_lines: np.ndarray,
    credited_lines: np.ndarray,
    wall_sec: np.ndarray,
    max_silence_sec: np.ndarray,
    peak_loose_workers: int,
) -> dict[str, Any]:
    """:func:`summarize` from per-call arrays (in call-frame row order) and per-episode arrays.

    The one place the summary is defined; :func:`summarize` feeds it the frames'
    columns, sweeps feed it arrays directly so no frame is built per policy point.
    """
    n_dispatched = int(np.count_nonzero(dispatched))
    n_bounded = int(np.count_nonzero(bounded))
    zombie = np.asarray(zombie_sec, dtype=float)
    finite = np.isfinite(zombie)
    wall = np.asarray(wall_sec, dtype=float)
    silence = np.asarray(max_silence_sec, dtype=float)
    requested = float(np.sum(requested_lines))
    credited = float(np.sum(credited_lines))
    # One partition for the three quantiles: the same order statistics and interpolation as one call each.
    p50, p95, p99 = (
        (float(q) for q in np.quantile(wall, (0.50, 0.95, 0.99))) if wall.size else (0.0, 0.0, 0.0)
    )
    return {
        "episodes": int(wall.size),
        "calls": int(zombie.size),
        "abandoned_call_rate": int(np.count_nonzero(abandoned)) / n_dispatched
        if n_dispatched
        else 0.0,
        "coverage_loss_rate": coverage_loss(requested, credited),
        "wall_p50_sec": p50,
        "wall_p95_sec": p95,
        "wall_p99_sec": p99,
        "wall_max_sec": float(wall.max()) if wall.size else 0.0,
        "max_silence_sec": float(silence.max()) if silence.size else 0.0,
        "zombie_sec": float(zombie[finite].sum()),
        "wedged_zombies": int((~finite).sum()),
        "peak_loose_workers": int(peak_loose_workers),
        "deadline_bound_share": int(np.count_nonzero(by_deadline)) / n_bounded
        if n_bounded
        else 0.0,
    }


def _breakdown(calls: pd.DataFrame, key: str) -> pd.DataFrame:
    frame = calls.assign(
        dispatched=calls["outcome"].isin(_DISPATCHED),
        abandoned=calls["source_gap"].eq("native_tool_abandoned"),
        deadline_bound=calls["bound_by"].eq("deadline"),
        zombie_finite=calls["zombie_sec"].where(np.isfinite(calls["zombie_sec"]), 0.0),
    )
    grouped = frame.groupby(key, sort=True).agg(
        calls=("dispatched", "sum"),
        abandoned_calls=("abandoned", "sum"),
        requested_lines=("requested_lines", "sum"),
        credited_lines=("credited_lines", "sum"),
        duration_p50_sec=("duration_sec", "median"),
        zombie_sec=("zombie_finite", "sum"),
        deadline_bounds=("deadline_bound", "sum"),
    )
    grouped["abandoned_call_rate"] = (
        grouped["abandoned_calls"] / grouped["calls"].where(grouped["calls"] > 0)
    ).fillna(0.0)
    req = grouped["requested_lines"].astype(float)
    grouped["coverage_loss_rate"] = (1.0 - grouped["credited_lines"] / req.where(req > 0)).fillna(
        0.0
    )
    return grouped.reset_index()


def per_tool(calls: pd.DataFrame) -> pd.DataFrame:
    """One row per tool: calls, abandoned calls and rate, lines asked and credited, coverage loss, zombie seconds."""
    return _breakdown(calls, "tool")


def per_slot(calls: pd.DataFrame, episodes: pd.DataFrame) -> pd.DataFrame:
    """One row per reviewer slot, with the same columns as :func:`per_tool` plus wall-time figures."""
    slots = episodes[["episode_id", "slot_id"]]
    frame = _breakdown(calls.merge(slots, on="episode_id", how="left"), "slot_id")
    walls = (
        episodes.groupby("slot_id")
        .agg(
            episodes=("episode_id", "count"),
            wall_p95_sec=("wall_sec", lambda s: float(np.quantile(s, 0.95))),
            max_silence_sec=("max_silence_sec", "max"),
        )
        .reset_index()
    )
    return walls.merge(frame, on="slot_id", how="left").fillna(0)


def is_finite_number(value: Any) -> bool:
    return isinstance(value, int | float) and math.isfinite(value)

"""Breakdowns of a replay by tool and by reviewer slot: one row per group with its calls, its
abandoned calls and rate, the lines asked and credited, the coverage lost and the zombie seconds.

:func:`breakdown` computes the rows from whole arrays (an engine hands over the arrays its frame
holds, so the breakdown and the frame agree by construction); :func:`per_tool` and
:func:`per_slot` compute the same rows from a call frame.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from reviewlab.core._metrics import timeout_lost_array
from reviewlab.core._quantiles import quantiles
from reviewlab.core._vocab import OUTCOMES_ANSWERED, SOURCE_GAP_ABANDONED


def _breakdown(calls: pd.DataFrame, key: str) -> pd.DataFrame:
    codes, names = pd.factorize(calls[key], sort=True)
    zombie = calls["zombie_sec"].to_numpy(dtype=float)
    arrays = BreakdownArrays(
        dispatched=calls["outcome"].isin(OUTCOMES_ANSWERED).to_numpy(),
        abandoned=calls["source_gap"].eq(SOURCE_GAP_ABANDONED).to_numpy(),
        deadline_bound=calls["bound_by"].eq("deadline").to_numpy(),
        zombie_sec=zombie,
        requested_lines=calls["requested_lines"].to_numpy(),
        credited_lines=calls["credited_lines"].to_numpy(),
        timeout_lost_lines=timeout_lost_array(calls),
        duration_sec=calls["duration_sec"].to_numpy(),
    )
    return breakdown(names, codes, key=key, arrays=arrays)


@dataclass(frozen=True)
class BreakdownArrays:
    """Per call, as the call frame's columns give them, what a per-group breakdown reads."""

    dispatched: np.ndarray
    abandoned: np.ndarray
    deadline_bound: np.ndarray
    """Whether the deadline set the call's bound."""
    zombie_sec: np.ndarray
    requested_lines: np.ndarray
    credited_lines: np.ndarray
    timeout_lost_lines: np.ndarray
    duration_sec: np.ndarray


def breakdown(names: Any, codes: np.ndarray, *, key: str, arrays: BreakdownArrays) -> pd.DataFrame:
    """The per-group breakdown of :func:`per_tool` and :func:`per_slot` from per-call arrays.

    ``codes``: per call, its group's position in ``names`` (sorted; ``-1``: no group, left
    out). ``arrays`` are per call, as the call frame's columns give them. One row per
    group with calls, in ``names`` order; an engine with the arrays at hand gives the frame's
    very breakdown without building the frame.
    """
    zombie = np.asarray(arrays.zombie_sec, dtype=float)
    finite = np.isfinite(zombie)
    frame = pd.DataFrame(
        {
            "_group": codes,
            "dispatched": arrays.dispatched,
            "abandoned": arrays.abandoned,
            "requested_lines": arrays.requested_lines,
            "credited_lines": arrays.credited_lines,
            "timeout_lost": arrays.timeout_lost_lines,
            "duration_sec": arrays.duration_sec,
            "zombie_finite": np.where(finite, zombie, 0.0),
            "wedged": ~finite,
            "deadline_bound": arrays.deadline_bound,
        }
    )
    grouped = (
        frame[frame["_group"] >= 0]
        .groupby("_group", sort=True)
        .agg(
            calls=("dispatched", "sum"),
            abandoned_calls=("abandoned", "sum"),
            requested_lines=("requested_lines", "sum"),
            credited_lines=("credited_lines", "sum"),
            timeout_lost_lines=("timeout_lost", "sum"),
            duration_p50_sec=("duration_sec", "median"),
            zombie_finite_sec=("zombie_finite", "sum"),
            wedged_zombies=("wedged", "sum"),
            deadline_bounds=("deadline_bound", "sum"),
        )
    )
    grouped.index = pd.Index(names, name=key)[grouped.index.to_numpy()]
    never_back = grouped["wedged_zombies"] > 0
    grouped["zombie_sec"] = grouped["zombie_finite_sec"].where(~never_back, math.inf)
    grouped["abandoned_call_rate"] = (
        grouped["abandoned_calls"] / grouped["calls"].where(grouped["calls"] > 0)
    ).fillna(0.0)
    req = grouped["requested_lines"].astype(float)
    grouped["coverage_loss_rate"] = (1.0 - grouped["credited_lines"] / req.where(req > 0)).fillna(
        0.0
    )
    grouped["timeout_coverage_loss_rate"] = (
        grouped["timeout_lost_lines"] / req.where(req > 0)
    ).fillna(0.0)
    grouped["inherent_coverage_loss_rate"] = (
        (req - grouped["credited_lines"] - grouped["timeout_lost_lines"]) / req.where(req > 0)
    ).fillna(0.0)
    return grouped.reset_index()


def per_tool(calls: pd.DataFrame) -> pd.DataFrame:
    """One row per tool: calls, abandoned calls and rate, lines asked and credited, coverage loss,
    zombie seconds."""
    return _breakdown(calls, "tool")


def per_slot(calls: pd.DataFrame, episodes: pd.DataFrame) -> pd.DataFrame:
    """One row per reviewer slot, with the same columns as :func:`per_tool` plus wall-time
    figures."""
    slots = episodes[["episode_id", "slot_id"]]
    frame = _breakdown(calls.merge(slots, on="episode_id", how="left"), "slot_id")
    walls = (
        episodes.groupby("slot_id")
        .agg(
            episodes=("episode_id", "count"),
            wall_p95_sec=("wall_sec", lambda s: quantiles(s.to_numpy(), (0.95,))[0]),
            max_silence_sec=("max_silence_sec", "max"),
        )
        .reset_index()
    )
    return walls.merge(frame, on="slot_id", how="left").fillna(0)

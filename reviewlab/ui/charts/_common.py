"""Layout helpers shared by the chart modules: the Axes to draw on, time units, labels, legends,
how a pool run's slots and seconds map back to the recording's slot names and clock, where an
infinite value is drawn, and the checks of a chart's input (columns, tools) naming the chart.

Nothing here computes a figure of the data; these are layout arithmetic and text only.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from reviewlab.engines._result import ReplayResult
from reviewlab.recording._schema import Episode


def figure_and_axes(ax: Axes | None, figsize: tuple[float, float]) -> tuple[Figure, Axes]:
    """The Axes to draw on and its figure: ``ax`` itself, or a fresh Agg figure."""
    if ax is not None:
        figure = ax.figure
        assert isinstance(figure, Figure)
        return figure, ax
    figure = Figure(figsize=figsize, layout="constrained")
    return figure, figure.add_subplot()


def duration_text(seconds: float) -> str:
    """``26160`` → ``"7 h 16 min"``; short spans in seconds."""
    if not math.isfinite(seconds):
        return "never returns"
    if seconds < 120:
        return f"{seconds:.3g} s"
    minutes = int(round(seconds / 60))
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if hours else f"{minutes} min"


def time_scale(span_sec: float) -> tuple[float, str]:
    """Divisor and unit label for a time axis spanning ``span_sec``."""
    if span_sec >= 3 * 3600:
        return 3600.0, "h"
    if span_sec >= 180:
        return 60.0, "min"
    return 1.0, "s"


def policy_label(result: ReplayResult) -> str:
    """How a chart title names the policy a replay ran under (:attr:`Policy.label`)."""
    return result.policy.label


def legend_outside(ax: Axes, *handles_and_labels: Any) -> None:
    """The legend right of the Axes: the timelines and curves fill their
    Axes, so inside it would hide data."""
    ax.legend(*handles_and_labels, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)


def recorded_slots(result: ReplayResult, episodes: Iterable[Episode] | None) -> dict[str, str]:
    """``episode_id → recorded slot name`` for the episodes of ``result``.

    From the episodes frame's ``recorded_slot`` column when the engine kept one,
    else from ``episodes`` (the recorded corpus); empty when neither is there.
    A pool simulation hands requests to its own slots (``slot-0`` …), so the
    slot a request had in the recording can only come from the recording.
    """
    frame = result.episodes
    if "recorded_slot" in frame.columns:
        return dict(zip(frame["episode_id"].astype(str), frame["recorded_slot"], strict=True))
    if episodes is None:
        return {}
    wanted = set(frame["episode_id"].astype(str))
    return {e.id: e.slot for e in episodes if e.id in wanted and e.slot}


def clock_origin(result: ReplayResult, episodes: Iterable[Episode] | None) -> datetime | None:
    """The wall-clock instant a pool run's second 0 stands for, when the recording says it.

    A pool run with recorded arrivals counts seconds from the earliest
    ``started_at`` of its episodes; with any other arrivals (Poisson) there is
    no clock to show and the answer is ``None``.
    """
    if episodes is None or result.assumptions.get("arrivals", "recorded") != "recorded":
        return None
    wanted = set(result.episodes["episode_id"].astype(str))
    starts = [e.started_at for e in episodes if e.id in wanted]
    return min(starts) if starts else None


LABEL_BOX = {"boxstyle": "round,pad=0.2", "facecolor": "white", "edgecolor": "none", "alpha": 0.85}
"""Behind a label drawn over bars: dark text on a white box reads on every bar colour."""


def require_columns(frame: pd.DataFrame, needed: Iterable[str], what: str) -> None:
    """Refuse ``frame`` unless it has every ``needed`` column, naming ``what`` and the missing."""
    missing = set(needed) - set(frame.columns)
    if missing:
        raise ValueError(f"{what} lack column(s) {', '.join(sorted(missing))}")


def pick_tools(tools: Sequence[str] | None, available: Iterable[str], refusal: str) -> list[str]:
    """``tools`` in the order given (default: every available tool,
    sorted); one not available is refused."""
    known = set(available)
    chosen = list(tools) if tools is not None else sorted(known)
    unknown = sorted(set(chosen) - known)
    if unknown:
        raise ValueError(f"{refusal} {', '.join(unknown)}")
    return chosen


def infinity_edges(xs: np.ndarray, ys: np.ndarray) -> tuple[float, float]:
    """Where infinite values are drawn: a little beyond the largest finite value on each axis."""

    def edge(values: np.ndarray) -> float:
        finite = values[np.isfinite(values)]
        if not finite.size:
            return 1.0
        low, high = float(finite.min()), float(finite.max())
        return high + 0.08 * max(high - low, abs(high), 1e-9)

    return edge(xs), edge(ys)

"""Layout helpers shared by the chart modules: the Axes to draw on, time units, labels, legends.

Nothing here computes a figure of the data; these are layout arithmetic and text only.
"""

from __future__ import annotations

import math
from typing import Any

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from reviewlab.engines.result import ReplayResult


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
    """How a chart title names the policy a replay ran under."""
    if result.narrowing is not None and result.narrowing.mode == "unbounded":
        return "unbounded (pre-fix)"
    name = getattr(result.policy, "name", None) or "policy"
    return f"{name}, {result.narrowing.label}" if result.narrowing is not None else name


def legend_outside(ax: Axes, *handles_and_labels: Any) -> None:
    """The legend right of the Axes: the timelines and curves fill their Axes, so inside it would hide data."""
    ax.legend(*handles_and_labels, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)

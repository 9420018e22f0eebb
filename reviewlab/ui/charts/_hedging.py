"""What hedging buys and what it costs, drawn: p99 wall time against the extra calls it made.

One chart, :func:`hedge_tradeoff`, over a sweep of hedge delays (a
:func:`reviewlab.analysis.sweep.sweep` frame over
``make_grid(hedges={tool: [...]})``): each point is one delay, at the share of
dispatched calls that were second attempts (``extra_call_share``) and the p99
episode wall time it gives; the points of one tool are joined in delay order
and labelled with their delay, and a reference without hedges (a summary) is drawn
as a horizontal line. Nothing is computed here beyond layout.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from reviewlab.ui.charts._common import figure_and_axes, legend_outside
from reviewlab.ui.charts._palette import policy_color, tool_color


def hedge_tradeoff(
    points: pd.DataFrame,
    *,
    reference: Mapping[str, Mapping[str, Any]] | None = None,
    y: str = "wall_p99_sec",
    ax: Axes | None = None,
) -> Figure:
    """p99 wall (``y``) against the extra-call share, one line per hedged tool, by delay.

    ``points`` has ``extra_call_share``, ``y`` and one ``hedge.<tool>.after_sec``
    column per hedged tool (a point hedging several tools is drawn on the line of
    each). ``reference`` maps a name (e.g. ``"ouroboros"``) to a summary without hedges
    drawn as a dashed line in the policy's palette colour. A delay label reads
    ``0.5 s``; an infinite ``y`` is drawn at the top edge as ▲.
    """
    tools = [c[len("hedge.") : -len(".after_sec")] for c in points.columns if _is_delay(c)]
    missing = [c for c in ("extra_call_share", y) if c not in points.columns]
    if missing or not tools:
        raise ValueError(
            "hedge_tradeoff: points need extra_call_share, "
            f"{y} and a hedge.<tool>.after_sec column (sweep a grid made with hedges=)"
        )
    figure, ax = figure_and_axes(ax, (7.5, 5.0))
    ys_all = points[y].to_numpy(dtype=float)
    finite = ys_all[np.isfinite(ys_all)]
    top = float(finite.max()) * 1.08 if finite.size else 1.0
    for tool in tools:
        column = f"hedge.{tool}.after_sec"
        line = points[points[column].notna()].sort_values(column, kind="stable")
        xs = 100 * line["extra_call_share"].to_numpy(dtype=float)
        ys = line[y].to_numpy(dtype=float)
        infinite = ~np.isfinite(ys)
        ys = np.where(infinite, top, ys)
        ax.plot(xs, ys, "o-", color=tool_color(tool), label=f"hedge {tool}", zorder=2)
        if infinite.any():
            ax.plot(xs[infinite], ys[infinite], "^", color=tool_color(tool), zorder=3)
        for px, py, delay in zip(xs, ys, line[column], strict=True):
            ax.annotate(
                f"{delay:g} s", (px, py), xytext=(5, 5), textcoords="offset points", fontsize=8
            )
    for name, summary in (reference or {}).items():
        value = float(summary[y])
        ax.axhline(
            value if math.isfinite(value) else top,
            linestyle="--",
            color=policy_color(name),
            label=f"{name} (no hedge)",
            zorder=1,
        )
    ax.set_xlabel("extra load: second attempts (% of dispatched calls)")
    ax.set_ylabel("p99 episode wall time (s)" if y == "wall_p99_sec" else y)
    ax.set_title("Hedging: tail wall time against the extra calls it costs")
    ax.grid(True, alpha=0.3)
    legend_outside(ax)  # right of the Axes: inside it would hide points
    return figure


def _is_delay(column: str) -> bool:
    return column.startswith("hedge.") and column.endswith(".after_sec")
